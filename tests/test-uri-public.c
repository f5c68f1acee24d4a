/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The libvirt URI every local user sees: no user name, password, query or fragment. */
#include "test-util.h"

#include "uri-public.h"

#include <string.h>

START_TEST(test_uri_public)
{
        static const char *const cases[][2] = {
            {"qemu:///system", "qemu:///system"},
            {"test:///default", "test:///default"},
            {"qemu+ssh://alice@kvm1/system", "qemu+ssh://kvm1/system"},
            {"qemu+ssh://alice@kvm1:2222/system?keyfile=/root/.ssh/id_ed25519&no_verify=1",
             "qemu+ssh://kvm1:2222/system"},
            {"qemu+tls://bob:s3cret@[fe80::1]:16514/system", "qemu+tls://[fe80::1]:16514/system"},
            {"qemu+tcp://a%40b@host/system", "qemu+tcp://host/system"},
            {"qemu+tcp://user@a@host/system", "qemu+tcp://host/system"},
            {"qemu:///system?socket=/run/libvirt/virtqemud-sock", "qemu:///system"},
            {"qemu+ssh://host/system#frag", "qemu+ssh://host/system"},
            {"qemu+ssh://carol@host?keyfile=/k", "qemu+ssh://host"},
            {"qemu+ssh://host/system?name=x@y", "qemu+ssh://host/system"},
            {"qemu+ssh://dave@host", "qemu+ssh://host"},
            {"test:/tmp/a@b.xml", "test:/tmp/a@b.xml"},
            {"", ""},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *got = uri_public(cases[i][0]);
                ck_assert_msg(g_strcmp0(got, cases[i][1]) == 0, "%s gave %s, expected %s", cases[i][0], got,
                              cases[i][1]);
        }
        ck_assert_ptr_null(uri_public(NULL));
}
END_TEST

/* What was left out is marked, never shown. */
START_TEST(test_uri_public_marked)
{
        static const char *const cases[][2] = {
            {"qemu:///system", "qemu:///system"},
            {"qemu:///system?socket=/run/libvirt/virtqemud-sock", "qemu:///system?..."},
            {"qemu+ssh://alice@kvm1:2222/system?keyfile=/root/.ssh/id",
             "qemu+ssh://...@kvm1:2222/system?..."},
            {"qemu+ssh://host/system#frag", "qemu+ssh://host/system?..."},
            {"qemu+ssh://dave@host", "qemu+ssh://...@host"},
            {"test:/tmp/a@b.xml?x", "test:/tmp/a@b.xml?..."},
            {"", ""},
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
                g_autofree char *got = uri_public_marked(cases[i][0]);
                ck_assert_msg(g_strcmp0(got, cases[i][1]) == 0, "%s gave %s, expected %s", cases[i][0], got,
                              cases[i][1]);
        }
        ck_assert_ptr_null(uri_public_marked(NULL));
}
END_TEST

/* None of the uris' public forms, plain or marked, holds "admin" or "S3" (their user and password). */
static void assert_hides_userinfo(const char *const *uris, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *plain = uri_public(uris[i]), *marked = uri_public_marked(uris[i]);
                ck_assert_msg(!strstr(plain, "admin") && !strstr(plain, "S3"), "%s gave %s", uris[i], plain);
                ck_assert_msg(!strstr(marked, "admin") && !strstr(marked, "S3"), "%s gave %s", uris[i],
                              marked);
        }
}

/* User information that holds a '?', '#' or '/' unescaped (a password typed as it is) ends where the
 * query or path would: none of it is shown, whatever the URI's form. */
START_TEST(test_uri_public_unescaped_userinfo)
{
        static const char *const uris[] = {
            "qemu+ssh://admin:S3?cret@kvm1/system",
            "qemu+ssh://admin:S3#cret@kvm1/system",
            "xen+ssh://admin:S3/cret@kvm1/",
        };
        assert_hides_userinfo(uris, G_N_ELEMENTS(uris));
}
END_TEST

/* An IPv6 zone ID is decoded by the split: what it holds escaped (%0a, %ff) must not come back as a raw
 * newline or invalid UTF-8 in the URI property or the unit's STATUS= (where a line "READY=1" is a notify
 * message of its own). */
START_TEST(test_uri_public_zone_id_no_control)
{
        static const char *const uris[] = {
            "qemu+tcp://[fe80::1%25%0aREADY=1%0a]/system",
            "qemu+tcp://[fe80::1%25%ff]/system",
            "qemu+tcp://[fe80::1%25eth%000]/system",
        };
        for (unsigned i = 0; i < G_N_ELEMENTS(uris); i++) {
                g_autofree char *plain = uri_public(uris[i]), *marked = uri_public_marked(uris[i]);
                ck_assert_msg(g_utf8_validate(plain, -1, NULL) && !strchr(plain, '\n'), "%s gave %s",
                              uris[i], plain);
                ck_assert_msg(g_utf8_validate(marked, -1, NULL) && !strchr(marked, '\n'), "%s gave %s",
                              uris[i], marked);
                /* nor is anything cut off at an escaped NUL */
                ck_assert_msg(!g_str_has_suffix(plain, "%eth]/system"), "%s gave %s", uris[i], plain);
        }
}
END_TEST

/* A password that starts with digits then holds an unescaped '/' or '#' splits as a host (the user name),
 * a port (its digits) and a path or fragment (the rest, up to the real host): none of it is shown. */
START_TEST(test_uri_public_numeric_password_prefix)
{
        static const char *const uris[] = {
            "xen+ssh://admin:22/S3cret@kvm1/",
            "lxc+ssh://admin:1/S3cret@kvm1/system",
            "xen+ssh://admin:22#S3cret@kvm1/",
        };
        assert_hides_userinfo(uris, G_N_ELEMENTS(uris));
}
END_TEST

static Suite *make_suite(void)
{
        Suite *s = suite_create("uri public");
        TCase *tc = tcase_create("redaction");

        tcase_add_test(tc, test_uri_public);
        tcase_add_test(tc, test_uri_public_marked);
        tcase_add_test(tc, test_uri_public_unescaped_userinfo);
        tcase_add_test(tc, test_uri_public_zone_id_no_control);
        tcase_add_test(tc, test_uri_public_numeric_password_prefix);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(make_suite)
