/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <glib/gstdio.h>
#include <sys/stat.h>

#include "config.h"
#include "topology.h"
#include "test-util.h"

static Config *load_ok(const char *text)
{
        Config *c = NULL;
        g_autofree char *err = NULL;
        int r = config_load_data(text, "test.conf", &c, &err);
        ck_assert_msg(r == 0, "load failed: %s", err ? err : "?");
        return c;
}

static char *load_fail(const char *text)
{
        Config *c = NULL;
        char *err = NULL;
        ck_assert_int_eq(config_load_data(text, "test.conf", &c, &err), -EINVAL);
        ck_assert_ptr_null(c);
        ck_assert_ptr_nonnull(err);
        return err;
}

START_TEST(test_defaults)
{
        g_autoptr(Config) c = load_ok("");
        ck_assert_int_eq(c->placement.policy, POLICY_EXPLICIT);
        ck_assert_int_eq(c->placement.vcpu_pin, VCPU_PIN_CORE);
        ck_assert_int_eq(c->placement.emulator_pin, EMULATOR_PIN_SIBLINGS);
        ck_assert(cpuset_is_empty(c->placement.reserved_cpus));
        ck_assert_uint_eq(c->placement.memory_reserve, 0);
        ck_assert(c->apply);
        ck_assert(c->memory_binding);
        ck_assert(c->place_running);
        ck_assert_uint_eq(c->reconcile_sec, 30);
        ck_assert_str_eq(c->uri, "qemu:///system");
        ck_assert_int_eq(c->bus, BUS_SYSTEM);
}
END_TEST

START_TEST(test_every_key)
{
        g_autoptr(Config) c =
            load_ok("# comment\n[Placement]\nPolicy=compat\nVCPUPin=thread\nEmulatorPin=none\n"
                    "ReservedCPUs=0-1,32-33\nMemoryReserve=2G\nApply=no\nMemoryBinding=false\n"
                    "PlaceRunning=off\nReconcileSec=60\nFit=pack\n[Libvirt]\nURI=test:///default\n"
                    "[DBus]\nBus=session\n");
        g_autofree char *reserved = cpuset_format(c->placement.reserved_cpus);
        ck_assert_int_eq(c->placement.policy, POLICY_COMPAT);
        ck_assert_int_eq(c->placement.vcpu_pin, VCPU_PIN_THREAD);
        ck_assert_int_eq(c->placement.emulator_pin, EMULATOR_PIN_NONE);
        ck_assert_str_eq(reserved, "0-1,32-33");
        ck_assert_uint_eq(c->placement.memory_reserve, UINT64_C(2) << 30);
        ck_assert(!c->apply);
        ck_assert(!c->memory_binding);
        ck_assert(!c->place_running);
        ck_assert_uint_eq(c->reconcile_sec, 60);
        ck_assert_int_eq(c->placement.fit, FIT_PACK);
        ck_assert_str_eq(c->uri, "test:///default");
        ck_assert_int_eq(c->bus, BUS_SESSION);
        /* the formatted config reads back the same */
        g_autofree char *text = config_format(c);
        g_autoptr(Config) again = load_ok(text);
        g_autofree char *text2 = config_format(again);
        ck_assert_str_eq(text, text2);
}
END_TEST

START_TEST(test_heal_and_load_keys)
{
        g_autoptr(Config) d = load_ok("");
        g_autoptr(Config) c = load_ok("[Placement]\nHeal=no\nHealMaxMoves=5\nHealInterval=0\n"
                                      "HealMemoryBudget=512M\nLoadInterval=20\nLoadWarmup=0\n");
        g_autofree char *text = config_format(c);
        g_autoptr(Config) again = load_ok(text);
        g_autofree char *e1 = load_fail("[Placement]\nHealMaxMoves=1001\nLoadInterval=1h\n");
        g_autofree char *e2 = load_fail("[Placement]\nHeal=sometimes\nHealMemoryBudget=-1\n");
        g_autofree char *e3 = load_fail("[Placement]\nLoadWarmup=-5\n");

        /* on by default: a few moves per pass, a few seconds after a departure */
        ck_assert(d->heal);
        ck_assert_uint_eq(d->heal_max_moves, 2);
        ck_assert_uint_eq(d->heal_interval_sec, 5);
        ck_assert_uint_eq(d->heal_memory_budget, UINT64_C(8) << 30);
        ck_assert_uint_eq(d->load_interval_sec, 5);
        ck_assert_uint_eq(d->load_warmup_sec, 5);
        ck_assert(!c->heal);
        ck_assert_uint_eq(c->heal_max_moves, 5);
        ck_assert_uint_eq(c->heal_interval_sec, 0);
        ck_assert_uint_eq(c->heal_memory_budget, UINT64_C(512) << 20);
        ck_assert_uint_eq(c->load_interval_sec, 20);
        ck_assert_uint_eq(c->load_warmup_sec, 0);
        ck_assert_uint_eq(again->load_warmup_sec, 0);
        ck_assert_ptr_nonnull(strstr(text, "Heal=no\nHealMaxMoves=5\n"));
        ck_assert(!again->heal);
        ck_assert_uint_eq(again->heal_memory_budget, UINT64_C(512) << 20);
        ck_assert_str_eq(e1,
                         "test.conf:2: [Placement] HealMaxMoves=1001: out of range; expected moves from 0 "
                         "to 1000\n"
                         "test.conf:3: [Placement] LoadInterval=1h: invalid value; expected seconds "
                         "from 0 (off) to 3600");
        ck_assert_ptr_nonnull(strstr(e2, "[Placement] Heal=sometimes: invalid value; expected yes, no"));
        ck_assert_ptr_nonnull(strstr(e2, "[Placement] HealMemoryBudget=-1: invalid value"));
        ck_assert_ptr_nonnull(strstr(e3, "LoadWarmup=-5: "));
        ck_assert_ptr_nonnull(strstr(e3, "seconds from 0 to 3600"));
}
END_TEST

START_TEST(test_bad_values_name_key_and_allowed)
{
        g_autofree char *e1 = load_fail("[Placement]\nPolicy=fastest\n");
        ck_assert_ptr_nonnull(strstr(e1, "test.conf"));
        ck_assert_str_eq(e1, "test.conf:2: [Placement] Policy=fastest: invalid value; expected explicit, "
                             "compat");
        g_autofree char *e2 = load_fail("[Placement]\nReservedCPUs=0-x\n");
        ck_assert_str_eq(e2,
                         "test.conf:2: [Placement] ReservedCPUs=0-x: not a CPU list; expected a CPU list "
                         "such as 0-1,32-33");
        g_autofree char *e3 = load_fail("[Placement]\nMemoryReserve=lots\nHealMemoryBudget=99999999T\n");
        ck_assert_str_eq(e3,
                         "test.conf:2: [Placement] MemoryReserve=lots: invalid value; expected a size in "
                         "bytes with an optional K, M, G or T suffix\n"
                         "test.conf:3: [Placement] HealMemoryBudget=99999999T: out of range; expected a "
                         "size in bytes with an optional K, M, G or T suffix");
        g_autofree char *e4 = load_fail("[Placement]\nApply=maybe\n");
        ck_assert_str_eq(e4, "test.conf:2: [Placement] Apply=maybe: invalid value; expected yes, no");
        g_autofree char *e5 = load_fail("[Placement]\nReconcileSec=-1\nReconcileSec2=1\n");
        ck_assert_msg(strstr(e5, "test.conf:2: [Placement] ReconcileSec=-1: invalid value; expected seconds "
                                 "from 0 (off) to 86400\n"),
                      "%s", e5);
        g_autofree char *e_fit = load_fail("[Placement]\nFit=tight\n");
        ck_assert_str_eq(e_fit, "test.conf:2: [Placement] Fit=tight: invalid value; expected spread, pack");
        g_autofree char *e6 = load_fail("[DBus]\nBus=tcp\n");
        ck_assert_str_eq(e6, "test.conf:2: [DBus] Bus=tcp: invalid value; expected system, session, none");
        g_autofree char *e7 = load_fail("[Libvirt]\nURI=\n");
        ck_assert_msg(g_str_has_prefix(e7, "test.conf:2: [Libvirt] URI: invalid value; expected a libvirt "),
                      "%s", e7);
        g_autofree char *e8 = load_fail("[Placement]\nVCPUPin=socket\nEmulatorPin=all\nCoreKinds=big\n"
                                        "HousekeepingCPUs=x\n");
        ck_assert_msg(strstr(e8, "test.conf:2: [Placement] VCPUPin=socket: invalid value; expected core, "),
                      "%s", e8);
        ck_assert_msg(strstr(e8, "test.conf:3: [Placement] EmulatorPin=all: invalid value; expected "), "%s",
                      e8);
        ck_assert_msg(strstr(e8, "test.conf:4: [Placement] CoreKinds=big: invalid value; expected "), "%s",
                      e8);
        ck_assert_msg(strstr(e8, "test.conf:5: [Placement] HousekeepingCPUs=x: not a CPU list; expected "),
                      "%s", e8);
        g_autofree char *e9 = load_fail("[Metrics]\nListen=localhost\n");
        ck_assert_msg(g_str_has_prefix(e9,
                                       "test.conf:2: [Metrics] Listen=localhost: invalid value; expected "
                                       "ADDRESS:PORT"),
                      "%s", e9);
        g_autofree char *e10 = load_fail("[Placement]\nPolicy=\n");
        ck_assert_str_eq(e10, "test.conf:2: [Placement] Policy=: invalid value; expected explicit, compat");
}
END_TEST

/* Each of uris loads as [Libvirt] URI=, kept as written. */
static void assert_uris_taken(const char *const *uris, unsigned n)
{
        for (unsigned i = 0; i < n; i++) {
                g_autofree char *text = g_strdup_printf("[Libvirt]\nURI=%s\n", uris[i]);
                g_autoptr(Config) c = NULL;
                g_autofree char *err = NULL;
                ck_assert_msg(config_load_data(text, "test.conf", &c, &err) == 0, "%s: %s", uris[i], err);
                ck_assert_str_eq(c->uri, uris[i]);
        }
}

/* A URI libvirt would refuse once placementd let go of the running connection's domains is refused where
 * it is written: one without a scheme, a qemu URI whose path libvirt's QEMU driver does not serve (a typo);
 * every other driver's path is libvirt's to judge. */
START_TEST(test_uri_checked)
{
        const char *bad[] = {"qemu:///sytem",   "qemu:///nonexistent", "qemu+ssh://kvm1/",
                             "qemu+ssh://kvm1", "qemu:system",         "/var/run/libvirt/libvirt-sock",
                             "1qemu:///system", ":///system"};
        const char *good[] = {"qemu:///system",
                              "qemu:///session",
                              "qemu:///embed?root=/tmp/x",
                              "qemu+ssh://admin@kvm1/system?keyfile=/root/k",
                              "qemu:///system?socket=/x",
                              "qemu+tls://kvm1.example.org/system",
                              "test:///default",
                              "test:///no-such-file.xml",
                              "lxc:///system",
                              "ch:///session"};

        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autofree char *text = g_strdup_printf("[Libvirt]\nURI=%s\n", bad[i]);
                g_autofree char *e = load_fail(text);
                ck_assert_msg(strstr(e, "test.conf:2: [Libvirt] URI: invalid value") && !strstr(e, "URI=") &&
                                  strstr(e, "/system, /session or /embed"),
                              "%s: %s", bad[i], e);
        }
        assert_uris_taken(good, G_N_ELEMENTS(good));
}
END_TEST

/* libvirt 9.0 takes a link-local address's zone ID unescaped (as ssh and getaddrinfo() write it), RFC
 * 6874's %25 or not: so does [Libvirt] URI= */
START_TEST(test_uri_zone_id_unescaped)
{
        const char *good[] = {"qemu+tcp://[fe80::1%eth0]/system",
                              "qemu+ssh://root@[fe80::1%eth0]:22/system"};

        assert_uris_taken(good, G_N_ELEMENTS(good));
}
END_TEST

/* GKeyFile takes no comment after a value: such a value is still refused, and the error says where
 * comments go; a bad value without one gets no such hint */
START_TEST(test_inline_comment_hint)
{
        static const char hint[] = "(comments go on a line of their own, starting with #)";
        g_autofree char *e1 = load_fail("[Placement]\nPolicy=compat # the old behaviour\n");
        g_autofree char *e2 = load_fail("[Placement]\nReservedCPUs=0-1 ; host\n");
        g_autofree char *e3 = load_fail("[Placement]\nApply=yes\t# for now\n");
        g_autofree char *e4 = load_fail("[Placement]\nPolicy=fastest\n");

        ck_assert_msg(g_str_has_prefix(e1,
                                       "test.conf:2: [Placement] Policy=compat # the old behaviour: invalid "
                                       "value; expected explicit, compat ") &&
                          g_str_has_suffix(e1, hint),
                      "%s", e1);
        ck_assert_msg(strstr(e2, "ReservedCPUs=0-1 ; host: ") && g_str_has_suffix(e2, hint), "%s", e2);
        ck_assert_msg(strstr(e3, "Apply=yes\\x09# for now: ") && g_str_has_suffix(e3, hint), "%s", e3);
        ck_assert_msg(!strstr(e4, "comments"), "%s", e4);
}
END_TEST

/* A file that is no configuration (a password file given by mistake, to a command run as root for
 * someone else) is refused line by line without a line of it shown, and so is a line before any section
 * that holds a secret. */
START_TEST(test_bad_lines_not_quoted)
{
        g_autofree char *shadow = load_fail("root:$6$salt$hash0123:19000:0:99999:7:::\n"
                                            "daemon:*:19000:0:99999:7:::\nbin=x:*:19000\n");
        g_autofree char *uri =
            load_fail("URI=qemu+ssh://admin:S3cretPass@kvm1/system?keyfile=/root/.ssh/id\n"
                      "[Libvirt]\n");

        ck_assert_msg(g_str_has_prefix(shadow, "test.conf:1: not a [Section], a Key=value or a # comment"),
                      "%s", shadow);
        ck_assert_msg(strstr(shadow, "test.conf:3: a Key=value before any [Section]"), "%s", shadow);
        ck_assert_msg(!strstr(shadow, "root") && !strstr(shadow, "hash") && !strstr(shadow, "19000") &&
                          !strstr(shadow, "bin"),
                      "%s", shadow);
        ck_assert_str_eq(uri, "test.conf:1: a Key=value before any [Section]");
}
END_TEST

/* Every error of a configuration reaches every local user (the daemon's ReloadError): a refused value is
 * shown escaped and cut, as names are, except [Libvirt] URI='s (a password, a user, key files); no key or
 * section name not spelled as one is shown, nor GLib's message (which quotes lines and values). */
START_TEST(test_values_shown_escaped)
{
        g_autofree char *value = load_fail("[Libvirt]\nURI=qemu+ssh://admin:S3cretPass@kvm1/sytem\n"
                                           "[Placement]\nPolicy=comp\x1b]0;PWNED\x07\xc2\x9b\xe2\x80\xae"
                                           "\xff\\\nMemoryTiers=hbm,opt\x1b"
                                           "ane\n");
        g_autofree char *key = load_fail("[Libvirt]\nqemu+ssh://admin:S3cretPass@kvm1/system?a=b\n");
        g_autofree char *section = load_fail("[admin:S3cretPass@kvm1]\nA=b\n");
        g_autofree char *encoding = load_fail("[Placement]\nEncoding=S3cretPass\n");
        g_autofree char *longtext = g_strnfill(200, 'x');
        g_autofree char *longconf = g_strdup_printf("[Placement]\nFit=%s\n", longtext);
        g_autofree char *cut = load_fail(longconf);
        g_autofree char *want_cut = g_strdup_printf(
            "test.conf:2: [Placement] Fit=%.64s...: invalid value; expected spread, pack", longtext);

        ck_assert_str_eq(value,
                         "test.conf:2: [Libvirt] URI: invalid value; expected a libvirt connection URI "
                         "such as qemu:///system (a qemu URI's path is /system, /session or /embed)\n"
                         "test.conf:4: [Placement] Policy=comp\\x1b]0;PWNED\\x07\\x9b\\u{202e}"
                         "\\xff\\x5c: invalid value; expected explicit, compat\n"
                         "test.conf:5: [Placement] MemoryTiers=hbm,opt\\x1bane: a word that is no memory "
                         "kind (opt\\x1bane); expected a list of hbm, nvm, cxl (memory kinds used like "
                         "DRAM), or empty");
        ck_assert_str_eq(cut, want_cut);
        ck_assert_msg(strstr(key, "test.conf:2: an unknown key in [Libvirt], not spelled as a key name"),
                      "%s", key);
        ck_assert_msg(strstr(section, "test.conf:1: an unknown section, not spelled as a section name"),
                      "%s", section);
        ck_assert_msg(!strstr(value, "S3cret") && !strstr(key, "S3cret") && !strstr(section, "S3cret") &&
                          !strstr(encoding, "S3cret") && !strstr(value, "admin") && !strstr(value, "sytem"),
                      "%s\n%s\n%s\n%s", value, key, section, encoding);
}
END_TEST

START_TEST(test_unknown_and_syntax)
{
        g_autofree char *e1 = load_fail("[Placement]\nPolicyy=explicit\n");
        ck_assert_ptr_nonnull(strstr(e1, "unknown key Policyy="));
        g_autofree char *e2 = load_fail("[Scheduler]\nX=1\n");
        ck_assert_ptr_nonnull(strstr(e2, "unknown section [Scheduler]"));
        g_autofree char *e3 = load_fail("Policy=explicit\n");
        ck_assert_msg(strstr(e3, "test.conf:1: a Key=value before any [Section]") && !strstr(e3, "explicit"),
                      "%s", e3);
        /* errors name the line, and a typo the key or section it meant, with what the section takes */
        g_autofree char *t1 = load_fail("# comment\n[Placement]\nApply=yes\npolicy=compat\n");
        ck_assert_msg(strstr(t1, "test.conf:4: unknown key policy= in [Placement] (did you mean Policy=?); "
                                 "[Placement] takes Policy, VCPUPin,"),
                      "%s", t1);
        g_autofree char *t2 = load_fail("[Placement]\nApply=yes\n\n[Metric]\nListen=:1\n");
        ck_assert_msg(strstr(t2,
                             "test.conf:4: unknown section [Metric] (did you mean [Metrics]?); the sections "
                             "are Placement, Libvirt, DBus, Metrics"),
                      "%s", t2);
        g_autofree char *t3 = load_fail("[Placement]\nZebra=1\n");
        ck_assert_msg(strstr(t3, "test.conf:2: unknown key Zebra= in [Placement]; [Placement] takes"), "%s",
                      t3);
        /* a key of another section names the section it belongs in, the value still unshown */
        g_autofree char *wrong = load_fail("[Placement]\nURI=qemu:///system\n[Metrics]\nApply=no\n");
        ck_assert_msg(strstr(wrong,
                             "test.conf:2: unknown key URI= in [Placement] (it belongs in [Libvirt]); "
                             "[Placement] takes Policy,") &&
                          strstr(wrong, "test.conf:4: unknown key Apply= in [Metrics] (it belongs in "
                                        "[Placement]); [Metrics] takes Listen") &&
                          !strstr(wrong, "qemu:///system"),
                      "%s", wrong);
        g_autofree char *t4 = load_fail("[Placement]\nApply=yes\nHeal\n");
        ck_assert_msg(
            strstr(t4, "test.conf:3: not a [Section], a Key=value or a # comment: it has no '='") &&
                !strstr(t4, "Heal"),
            "%s", t4);
        {
                /* a UTF-8 byte order mark is no syntax error */
                g_autoptr(Config) bom = load_ok("\xef\xbb\xbf[Placement]\nPolicy=compat\n");
                ck_assert_int_eq(bom->placement.policy, POLICY_COMPAT);
        }
        g_autofree char *t6 = load_fail("[Placement]\n\nPolicy=fast\n");
        ck_assert_msg(
            strstr(t6, "test.conf:3: [Placement] Policy=fast: invalid value; expected explicit, compat"),
            "%s", t6);
        g_autofree char *t5 = load_fail("[Placement]\r\nApply=yes\r\n[Metrics\r\n");
        ck_assert_msg(strstr(t5, "test.conf:3: not a [Section] header") && !strstr(t5, "[Metrics"), "%s",
                      t5);
        /* a header GKeyFile refuses as a group name is named by its line too */
        g_autofree char *t7 = load_fail("[Placement]\nApply=yes\n[A]B]\n");
        ck_assert_msg(strstr(t7, "test.conf:3: not a [Section] header"), "%s", t7);
        g_autofree char *t8 = load_fail("[Placement]\nPolicy[de]=compat\n");
        ck_assert_msg(strstr(t8,
                             "test.conf:2: not a [Section], a Key=value or a # comment: its key is empty or "
                             "holds [ or ]"),
                      "%s", t8);
        g_autofree char *t9 = load_fail("[Placement]\nApply=yes\nPol[icy=compat\n");
        ck_assert_msg(strstr(t9, "test.conf:3: not a [Section], a Key=value") && !strstr(t9, "Pol[icy"),
                      "%s", t9);
        /* all errors reported together */
        g_autofree char *e4 = load_fail("[Placement]\nPolicy=x\nFoo=1\n[Bar]\n");
        ck_assert_ptr_nonnull(strstr(e4, "Policy=x: "));
        ck_assert_ptr_nonnull(strstr(e4, "Foo"));
        ck_assert_ptr_nonnull(strstr(e4, "[Bar]"));
        /* the keys under a broken header are not the section's before it: no error of theirs is made up */
        g_autofree char *e7 = load_fail("[Placement]\nPolicy=compat\n[Metrics\nPolicy=bogus\nListen=x\n");
        ck_assert_str_eq(e7,
                         "test.conf:3: not a [Section] header: a name between [ and ] alone on its line, "
                         "without brackets or control characters in it");
        /* malformed lines too, each named, with the errors of the lines around them, in line order */
        g_autofree char *e6 = load_fail("[Placement]\nPolicy=bogus\nReservedCPUs 0-1\nFit=tight\nfoo\n");
        ck_assert_str_eq(e6,
                         "test.conf:2: [Placement] Policy=bogus: invalid value; expected explicit, compat\n"
                         "test.conf:3: not a [Section], a Key=value or a # comment: it has no '='\n"
                         "test.conf:4: [Placement] Fit=tight: invalid value; expected spread, pack\n"
                         "test.conf:5: not a [Section], a Key=value or a # comment: it has no '='");
        /* a key set twice, also across a section given twice: GKeyFile would keep the last silently */
        g_autofree char *e5 = load_fail("[Placement]\nPolicy=compat\n[Metrics]\nListen=127.0.0.1:9464\n"
                                        "# again\n[Placement]\nPolicy = explicit\nApply=no\nApply=yes\n");
        ck_assert_msg(strstr(e5, "test.conf:7: [Placement] Policy= is set again (first on line 2)"), "%s",
                      e5);
        ck_assert_msg(strstr(e5, "test.conf:9: [Placement] Apply= is set again (first on line 8)"), "%s",
                      e5);
        {
                /* a section given twice with different keys is still one section */
                g_autoptr(Config) c = NULL;
                ck_assert_int_eq(
                    config_load_data("[Placement]\nPolicy=compat\n[Metrics]\n[Placement]\nApply=no\n",
                                     "test.conf", &c, NULL),
                    0);
                ck_assert(!c->apply);
        }
}
END_TEST

START_TEST(test_many_problems_capped)
{
        /* a file of thousands of mistakes: the first CONFIG_ERRORS_MAX in line order, each with its line,
         * and a count of the rest */
        GString *text = g_string_new("[Placement]\nPolicy=fast\n");
        g_autofree char *e = NULL, *last = NULL;
        g_auto(GStrv) lines = NULL;

        for (unsigned i = 0; i < 5000; i++)
                g_string_append_printf(text, "Foo%u=1\n", i);
        e = load_fail(text->str);
        g_string_free(text, TRUE);
        lines = g_strsplit(e, "\n", -1);
        ck_assert_uint_eq(g_strv_length(lines), CONFIG_ERRORS_MAX + 1);
        ck_assert_msg(g_str_has_prefix(lines[0], "test.conf:2: [Placement] Policy=fast: invalid value"),
                      "%s", lines[0]);
        ck_assert_msg(g_str_has_prefix(lines[1], "test.conf:3: unknown key Foo0= in [Placement]"), "%s",
                      lines[1]);
        /* Foo98 on line 101 */
        last = g_strdup_printf("test.conf:%u: unknown key Foo%u= in [Placement]", CONFIG_ERRORS_MAX + 1,
                               CONFIG_ERRORS_MAX - 2);
        ck_assert_msg(g_str_has_prefix(lines[CONFIG_ERRORS_MAX - 1], last), "%s",
                      lines[CONFIG_ERRORS_MAX - 1]);
        ck_assert_str_eq(lines[CONFIG_ERRORS_MAX], "test.conf: ... and 4901 more problems");
}
END_TEST

START_TEST(test_file)
{
        Config *c = NULL;
        g_autofree char *err = NULL;
        g_autofree char *shipped =
            g_build_filename(g_getenv("PLACEMENTD_SRCDIR") ? g_getenv("PLACEMENTD_SRCDIR") : ".", "conf",
                             "placementd.conf", NULL);
        ck_assert_int_eq(config_load_file("/nonexistent/placementd.conf", &c, &err), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err, "/nonexistent/placementd.conf"));
        /* the shipped example parses and equals the defaults (every key documented, commented out) */
        g_autofree char *err2 = NULL;
        ck_assert_msg(config_load_file(shipped, &c, &err2) == 0, "%s", err2 ? err2 : "");
        g_autoptr(Config) def = config_new_default();
        g_autofree char *a = config_format(c), *b = config_format(def);
        ck_assert_str_eq(a, b);
        config_free(c);
}
END_TEST

/* A default file that does not exist means the built-in defaults, and says so (the daemon logs the note at
 * start and on a reload instead of naming a file it did not read); one the operator named is an error. */
START_TEST(test_missing_default)
{
        static const char path[] = "/nonexistent/placementd.conf";
        g_autoptr(Config) c = NULL, def = config_new_default();
        Config *none = NULL;
        g_autofree char *note = NULL, *err = NULL, *note2 = NULL, *a = NULL, *b = NULL;

        ck_assert_int_eq(config_load_or_defaults(path, false, &c, &note, &err), 1);
        ck_assert_str_eq(note, "/nonexistent/placementd.conf not found: built-in defaults");
        ck_assert_ptr_null(err);
        a = config_format(c);
        b = config_format(def);
        ck_assert_str_eq(a, b);
        ck_assert_int_eq(config_load_or_defaults(path, true, &none, &note2, &err), -ENOENT);
        ck_assert_ptr_null(none);
        ck_assert_ptr_null(note2);
        ck_assert_ptr_nonnull(strstr(err, path));
}
END_TEST

/* Every "#Key=value" line of the shipped file shows the key's default: uncommented alone it loads exactly
 * the defaults (an empty HousekeepingCPUs= means none, not the default ReservedCPUs= list, so that key has
 * no such line). Every key config_format() writes is in the file. */
START_TEST(test_shipped_lines)
{
        g_autofree char *shipped =
            g_build_filename(g_getenv("PLACEMENTD_SRCDIR") ? g_getenv("PLACEMENTD_SRCDIR") : ".", "conf",
                             "placementd.conf", NULL);
        g_autofree char *data = NULL, *deftext = NULL;
        g_autoptr(Config) def = config_new_default();
        g_auto(GStrv) lines = NULL, keys = NULL;
        const char *section = "";
        unsigned shown = 0;

        ck_assert(g_file_get_contents(shipped, &data, NULL, NULL));
        deftext = config_format(def);
        lines = g_strsplit(data, "\n", -1);
        for (char **l = lines; *l; l++) {
                g_autoptr(Config) c = NULL;
                g_autofree char *text = NULL, *err = NULL, *ctext = NULL;
                if ((*l)[0] == '[')
                        section = *l;
                if ((*l)[0] != '#' || !g_ascii_isupper((*l)[1]) || !strchr(*l, '='))
                        continue;
                text = g_strdup_printf("%s\n%s\n", section, *l + 1);
                ck_assert_msg(config_load_data(text, "shipped", &c, &err) == 0, "%s: %s", *l, err);
                ctext = config_format(c);
                ck_assert_msg(g_str_equal(ctext, deftext) && !c->placement.housekeeping_cpus,
                              "uncommenting %s in %s changes the configuration", *l, shipped);
                shown++;
        }
        ck_assert_uint_gt(shown, 20);
        keys = g_strsplit(deftext, "\n", -1);
        for (char **k = keys; *k; k++) {
                g_autofree char *key = NULL;
                if (!strchr(*k, '=') || (*k)[0] == '[')
                        continue;
                key = g_strndup(*k, strchr(*k, '=') - *k + 1);
                ck_assert_msg(strstr(data, key), "%s does not describe %s", shipped, key);
        }
}
END_TEST

static void assert_file_refused(const char *path, int r, const char *needle)
{
        Config *c = NULL;
        g_autofree char *err = NULL;

        ck_assert_int_eq(config_load_file(path, &c, &err), r);
        ck_assert_ptr_null(c);
        ck_assert_msg(strstr(err, path) && strstr(err, needle), "%s", err);
}

/* A NUL byte used to end the file silently (a file of NULs loaded as the defaults, Apply=yes); a FIFO
 * blocked the load, /dev/zero grew without limit. */
START_TEST(test_file_bounded)
{
        g_autofree char *dir = g_dir_make_tmp("test-config-XXXXXX", NULL);
        g_autofree char *nuls = g_build_filename(dir, "nuls.conf", NULL);
        g_autofree char *tail = g_build_filename(dir, "tail.conf", NULL);
        g_autofree char *fifo = g_build_filename(dir, "fifo.conf", NULL);
        g_autofree char *big = g_build_filename(dir, "big.conf", NULL);
        g_autofree char *zeros = g_malloc0(4096), *comment = g_strnfill(CONFIG_FILE_MAX + 1, '#');
        static const char advisory[] = "[Placement]\nApply=no\n\0Policy=compat\n";

        ck_assert(g_file_set_contents(nuls, zeros, 4096, NULL));
        ck_assert(g_file_set_contents(tail, advisory, sizeof(advisory) - 1, NULL));
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        ck_assert(g_file_set_contents(big, comment, CONFIG_FILE_MAX + 1, NULL));

        assert_file_refused(nuls, -EINVAL, "a NUL byte on line 1");
        assert_file_refused(tail, -EINVAL, "a NUL byte on line 3");
        assert_file_refused(fifo, -EINVAL, "a FIFO, not a regular file");
        assert_file_refused("/dev/zero", -EINVAL, "a character device, not a regular file");
        assert_file_refused(big, -EFBIG, "larger than the limit of 1 MiB");
        assert_file_refused(dir, -EISDIR, "Is a directory");
        g_unlink(nuls);
        g_unlink(tail);
        g_unlink(fifo);
        g_unlink(big);
        g_rmdir(dir);
}
END_TEST

/* A configuration any local user may write is any local user's way to steer the daemon: where it connects
 * (URI=, a qemu+ssh:// server of theirs, reached with root's keys), whether and where it pins, where it
 * serves metrics. Such a file is refused, as logrotate and sudo refuse theirs; writable by its owner alone,
 * it loads. */
START_TEST(test_file_writable_by_others)
{
        g_autofree char *dir = g_dir_make_tmp("test-config-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, "open.conf", NULL);
        g_autoptr(Config) c = NULL;
        g_autofree char *err = NULL;

        ck_assert(g_file_set_contents(path, "[Placement]\nApply=no\n", -1, NULL));
        ck_assert_int_eq(chmod(path, 0666), 0);
        assert_file_refused(path, -EPERM, "writable by every user");
        ck_assert_int_eq(chmod(path, 0644), 0);
        ck_assert_msg(config_load_file(path, &c, &err) == 0, "%s", err);
        g_unlink(path);
        g_rmdir(dir);
}
END_TEST

/* Loads text from a file named name (in a directory of its own), which must fail: *ret_error and
 * *ret_public as config_load_or_defaults_public() gives them. */
static void load_public(const char *name, const char *text, char **ret_error, char **ret_public)
{
        g_autofree char *dir = g_dir_make_tmp("test-config-XXXXXX", NULL);
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_autofree char *plain = NULL;
        Config *c = NULL;

        ck_assert(g_file_set_contents(path, text, -1, NULL));
        ck_assert_int_eq(config_load_or_defaults_public(path, true, &c, NULL, ret_error, ret_public),
                         -EINVAL);
        ck_assert_ptr_null(c);
        /* the plain call gives the caller's text, marks and all taken out */
        ck_assert_int_eq(config_load_or_defaults(path, true, &c, NULL, &plain), -EINVAL);
        ck_assert_str_eq(plain, *ret_error);
        g_unlink(path);
        g_rmdir(dir);
}

/* The errors everyone reads (a reload's ReloadError) name the line and key without the value refused,
 * which may be a secret typed into the wrong key; the caller's errors show it. */
START_TEST(test_public_errors_without_values)
{
        g_autofree char *error = NULL, *public = NULL;

        load_public("secret.conf",
                    "[Placement]\nReservedCPUs=S3cretPass\nFit=pakc\nMemoryTiers=hbm,S3cret\n", &error,
                    &public);
        ck_assert_msg(strstr(error, "secret.conf:2: [Placement] ReservedCPUs=S3cretPass: ") &&
                          strstr(error, "secret.conf:3: [Placement] Fit=pakc: invalid value") &&
                          strstr(error, "a word that is no memory kind (S3cret)"),
                      "%s", error);
        ck_assert_msg(
            strstr(public, "secret.conf:2: [Placement] ReservedCPUs: ") &&
                strstr(public, "secret.conf:3: [Placement] Fit: invalid value; expected spread, pack") &&
                strstr(public, "secret.conf:4: [Placement] MemoryTiers: a word that is no memory kind; ") &&
                !strstr(public, "S3cret") && !strstr(public, "pakc") && !strchr(public, '\x1e') &&
                !strchr(public, '\x1f'),
            "%s", public);
}
END_TEST

/* A key set twice whose name is not spelled as one (a URI pasted as a line, so the text before its first
 * '=' is the key) is not shown in what everyone reads, as its unknown-key error does not show it; nor does
 * a mark byte in such a name hide the next error's text or join two errors into one. */
START_TEST(test_public_errors_repeated_name)
{
        g_autofree char *error = NULL, *public = NULL;

        load_public("repeated.conf",
                    "[Libvirt]\n"
                    "qemu+ssh://admin:S3cret@kvm1/system?keyfile=/root/.ssh/id\n"
                    "qemu+ssh://admin:S3cret@kvm1/system?keyfile=/root/.ssh/id\n"
                    "[Placement]\nFit\x1e=1\nFit\x1e=2\nPolicy=pakc\n",
                    &error, &public);
        ck_assert_msg(!strstr(public, "S3cret") && !strstr(public, "keyfile"), "%s", public);
        ck_assert_msg(strstr(public,
                             "repeated.conf:7: [Placement] Policy: invalid value; expected explicit, "
                             "compat"),
                      "%s", public);
}
END_TEST

/* A key set twice with bad values: each refused value is named with the line that holds it, once. */
START_TEST(test_repeated_key_values_on_their_lines)
{
        g_autofree char *e = load_fail("[Placement]\nFit=aaa\nFit=bbb\n");

        ck_assert_msg(strstr(e, "test.conf:2: [Placement] Fit=aaa: ") ||
                          !strstr(e, "test.conf:2: [Placement] Fit=bbb"),
                      "%s", e);
        ck_assert_msg(!strstr(strstr(e, "Fit=bbb") ? strstr(e, "Fit=bbb") + 1 : "", "Fit=bbb"), "%s", e);
}
END_TEST

/* HousekeepingCPUs= follows ReservedCPUs= unless given; empty means none. */
START_TEST(test_housekeeping_cpus)
{
        g_autoptr(Config) unset = load_ok("[Placement]\nReservedCPUs=0-1\n");
        g_autoptr(Config) given = load_ok("[Placement]\nReservedCPUs=0-1\nHousekeepingCPUs=2,34\n");
        g_autoptr(Config) none = load_ok("[Placement]\nReservedCPUs=0-1\nHousekeepingCPUs=\n");
        g_autoptr(Config) again = NULL;
        g_autofree char *list = cpuset_format(given->placement.housekeeping_cpus);
        g_autofree char *text = config_format(unset), *text2 = NULL;
        g_autofree char *e1 = load_fail("[Placement]\nHousekeepingCPUs=2-x\n");

        ck_assert_ptr_null(unset->placement.housekeeping_cpus);
        ck_assert_str_eq(list, "2,34");
        ck_assert(none->placement.housekeeping_cpus && cpuset_is_empty(none->placement.housekeeping_cpus));
        /* the effective list is written, and reads back the same */
        ck_assert_ptr_nonnull(strstr(text, "HousekeepingCPUs=0-1\n"));
        again = load_ok(text);
        text2 = config_format(again);
        ck_assert_str_eq(text, text2);
        ck_assert_ptr_nonnull(strstr(e1, "[Placement] HousekeepingCPUs=2-x: not a CPU list"));
        ck_assert_ptr_nonnull(strstr(e1, "a CPU list"));
}
END_TEST

/* A CPU list that is written but names no CPU (^0, 0,^0) is refused as the domain XML parser refuses it:
 * whoever wrote ReservedCPUs=^0 meant "all but 0", not "reserve nothing". A blank value is the empty set
 * on purpose (HousekeepingCPUs= none, ReservedCPUs= none). */
START_TEST(test_cpu_list_empty_refused)
{
        g_autofree char *e1 = load_fail("[Placement]\nReservedCPUs=^0\n");
        g_autofree char *e2 = load_fail("[Placement]\nHousekeepingCPUs= 0-1,^0,^1 \n");
        g_autofree char *e3 = load_fail("[Placement]\nReservedCPUs=1,^1\nHousekeepingCPUs=^2\n");
        g_autoptr(Config) blank = load_ok("[Placement]\nReservedCPUs=\nHousekeepingCPUs=\n");

        ck_assert_str_eq(e1, "test.conf:2: [Placement] ReservedCPUs=^0: the list is empty; expected a CPU "
                             "list such as 0-1,32-33");
        ck_assert_msg(g_str_has_prefix(e2,
                                       "test.conf:2: [Placement] HousekeepingCPUs=0-1,^0,^1: the list is "
                                       "empty; expected "),
                      "%s", e2);
        ck_assert_msg(strstr(e3, "test.conf:2: [Placement] ReservedCPUs=1,^1: the list is empty"), "%s", e3);
        ck_assert_msg(strstr(e3, "test.conf:3: [Placement] HousekeepingCPUs=^2: the list is empty"), "%s",
                      e3);
        ck_assert(cpuset_is_empty(blank->placement.reserved_cpus));
        ck_assert(blank->placement.housekeeping_cpus && cpuset_is_empty(blank->placement.housekeeping_cpus));
}
END_TEST

/* A reload applies what it can and names, without applying them, the keys that need a restart. */
START_TEST(test_restart_keys)
{
        g_autoptr(Config) old = load_ok("[DBus]\nBus=system\n[Placement]\nPolicy=explicit\n");
        g_autoptr(Config) same = load_ok("[Placement]\nPolicy=compat\n[Metrics]\nListen=127.0.0.1:9\n");
        g_autoptr(Config) bus = load_ok("[DBus]\nBus=session\n[Placement]\nPolicy=compat\nApply=no\n"
                                        "ReservedCPUs=0-1\n[Libvirt]\nURI=test:///default\n");
        g_auto(GStrv) none = config_restart_changes(old, same);
        g_auto(GStrv) changes = config_restart_changes(old, bus);
        g_autoptr(Config) applied = config_reloadable(old, bus);
        g_autofree char *reserved = NULL;

        /* Policy, Listen, Apply and URI apply live */
        ck_assert_uint_eq(g_strv_length(none), 0);
        ck_assert_uint_eq(g_strv_length(changes), 1);
        ck_assert_str_eq(changes[0], "[DBus] Bus=session (running with system)");
        /* the reload keeps the running bus and takes everything else */
        ck_assert_int_eq(applied->bus, BUS_SYSTEM);
        ck_assert_int_eq(applied->placement.policy, POLICY_COMPAT);
        ck_assert(!applied->apply);
        ck_assert_str_eq(applied->uri, "test:///default");
        reserved = cpuset_format(applied->placement.reserved_cpus);
        ck_assert_str_eq(reserved, "0-1");
        ck_assert_str_eq(applied->path, "test.conf");
        /* HousekeepingCPUs= left unset stays unset (following ReservedCPUs=): a reload does not warn
         * about a key the file never wrote */
        ck_assert_ptr_null(applied->placement.housekeeping_cpus);
}
END_TEST

START_TEST(test_metrics_listen)
{
        static const char *const good[] = {"127.0.0.1:9464", "[::1]:9464", "localhost:1", "0.0.0.0:65535",
                                           ":9464"};
        static const char *const bad[] = {"9464",     "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
                                          "::1:9464", "[::1]9464",  "a b:1",       "::9464",
                                          ":",        "[]:9464"};
        for (unsigned i = 0; i < G_N_ELEMENTS(good); i++) {
                g_autofree char *text = g_strdup_printf("[Metrics]\nListen=%s\n", good[i]);
                g_autoptr(Config) c = load_ok(text);
                g_autofree char *host = NULL;
                unsigned port = 0;
                ck_assert_str_eq(c->metrics_listen, good[i]);
                ck_assert_int_eq(config_split_listen(c->metrics_listen, &host, &port), 0);
                ck_assert_uint_gt(port, 0);
                ck_assert(!strchr(host, '['));
        }
        for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
                g_autofree char *text = g_strdup_printf("[Metrics]\nListen=%s\n", bad[i]);
                g_autofree char *err = load_fail(text);
                ck_assert_msg(strstr(err, "Listen"), "%s: %s", bad[i], err);
        }
        {
                g_autofree char *host = NULL;
                unsigned port = 0;
                ck_assert_int_eq(config_split_listen(":9464", &host, &port), 0);
                ck_assert_str_eq(host, ""); /* every address */
                ck_assert_uint_eq(port, 9464);
        }
        g_autoptr(Config) off = load_ok("[Metrics]\nListen=\n");
        ck_assert_ptr_null(off->metrics_listen);
}
END_TEST

/* MemoryTiers= names lower-tier memory kinds used like DRAM; GPU memory is refused; CoreKinds= a mode. */
START_TEST(test_kinds_keys)
{
        g_autoptr(Config) def = load_ok("");
        g_autoptr(Config) c =
            load_ok("[Placement]\nMemoryTiers=hbm, cxl dram\nCoreKinds=performance-only\n");
        g_autoptr(Config) back = NULL;
        g_autofree char *text = config_format(c);
        g_autofree char *gpu = load_fail("[Placement]\nMemoryTiers=dram,gpu\n");
        g_autofree char *unknown = load_fail("[Placement]\nMemoryTiers=optane\n");
        g_autofree char *mode = load_fail("[Placement]\nCoreKinds=efficiency-first\n");

        ck_assert_uint_eq(def->placement.memory_tiers, 0);
        ck_assert_int_eq(def->placement.core_kinds, CORE_KINDS_PERFORMANCE_FIRST);
        ck_assert_uint_eq(c->placement.memory_tiers, (1u << NODE_KIND_HBM) | (1u << NODE_KIND_CXL));
        ck_assert_int_eq(c->placement.core_kinds, CORE_KINDS_PERFORMANCE_ONLY);
        ck_assert_msg(strstr(text, "MemoryTiers=hbm,cxl\nCoreKinds=performance-only\n"), "%s", text);
        back = load_ok(text);
        ck_assert_uint_eq(back->placement.memory_tiers, c->placement.memory_tiers);
        ck_assert_msg(strstr(gpu, "MemoryTiers=dram,gpu: GPU memory is never given to guests"), "%s", gpu);
        ck_assert_str_eq(unknown,
                         "test.conf:2: [Placement] MemoryTiers=optane: a word that is no memory kind "
                         "(optane); expected a list of hbm, nvm, cxl (memory kinds used like DRAM), or "
                         "empty");
        ck_assert_msg(strstr(mode, "performance-first, performance-only, any"), "%s", mode);
}
END_TEST

static Suite *config_suite(void)
{
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_uri_zone_id_unescaped);
        tcase_add_test(tc, test_every_key);
        tcase_add_test(tc, test_bad_values_name_key_and_allowed);
        tcase_add_test(tc, test_uri_checked);
        tcase_add_test(tc, test_heal_and_load_keys);
        tcase_add_test(tc, test_unknown_and_syntax);
        tcase_add_test(tc, test_bad_lines_not_quoted);
        tcase_add_test(tc, test_values_shown_escaped);
        tcase_add_test(tc, test_many_problems_capped);
        tcase_add_test(tc, test_file);
        tcase_add_test(tc, test_missing_default);
        tcase_add_test(tc, test_shipped_lines);
        tcase_add_test(tc, test_file_bounded);
        tcase_add_test(tc, test_file_writable_by_others);
        tcase_add_test(tc, test_public_errors_without_values);
        tcase_add_test(tc, test_public_errors_repeated_name);
        tcase_add_test(tc, test_repeated_key_values_on_their_lines);
        tcase_add_test(tc, test_housekeeping_cpus);
        tcase_add_test(tc, test_cpu_list_empty_refused);
        tcase_add_test(tc, test_restart_keys);
        tcase_add_test(tc, test_metrics_listen);
        tcase_add_test(tc, test_kinds_keys);
        tcase_add_test(tc, test_inline_comment_hint);
        suite_add_tcase(s, tc);
        return s;
}

TEST_MAIN(config_suite)
