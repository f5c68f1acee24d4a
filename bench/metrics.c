/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metrics.h"

void metrics_init(QualityMetrics *m)
{
        *m = (QualityMetrics){0};
}

unsigned metrics_shared_vcpus(const Occupancy *o, const Plan *p)
{
        unsigned shared = 0;

        for (unsigned v = 0; v < p->nvcpus; v++)
                if (p->vcpu_pu[v] >= 0 && o->core_load[o->t->pus[p->vcpu_pu[v]].core] >= 2)
                        shared++;
        return shared;
}

unsigned metrics_nodes_used(const Topology *t, const Plan *p)
{
        g_autoptr(CpuSet) used = cpuset_new();

        if (p->vcpu_pin == VCPU_PIN_NODESET)
                cpuset_union(used, p->nodes);
        for (unsigned v = 0; v < p->nvcpus; v++)
                if (p->vcpu_pu[v] >= 0)
                        cpuset_add(used, occupancy_pu_node(t, (unsigned)p->vcpu_pu[v]));
        for (unsigned n = 0; n < p->nnode_memory; n++)
                if (p->node_memory[n])
                        cpuset_add(used, n);
        return cpuset_count(used);
}

/* Mean distance from node `from` to the plan's memory, weighted by bytes; < 0 when it has none. */
static double memory_distance(const Topology *t, const Plan *p, unsigned from)
{
        double sum = 0, bytes = 0;

        for (unsigned n = 0; n < p->nnode_memory; n++) {
                uint32_t d = topology_distance(t, from, n);
                if (!p->node_memory[n] || d == TOPOLOGY_UNREACHABLE)
                        continue;
                sum += (double)p->node_memory[n] * d;
                bytes += (double)p->node_memory[n];
        }
        return bytes > 0 ? sum / bytes : -1;
}

void metrics_record_start(QualityMetrics *m, const Occupancy *o, const Plan *p, const StartContext *ctx)
{
        const Topology *t = o->t;
        unsigned shared = metrics_shared_vcpus(o, p), used, need;

        m->starts++;
        m->vcpus_started += p->nvcpus;
        switch (p->result) {
        case PLAN_PLACED:
                m->placed++;
                break;
        case PLAN_OVERCOMMITTED:
                m->overcommitted++;
                break;
        default:
                m->unplaceable++;
                break;
        }
        m->shared_at_start += shared;
        if (shared && ctx->min_nodes_free)
                m->avoidable += shared;

        used = metrics_nodes_used(t, p);
        need = ctx->min_nodes_free ? ctx->min_nodes_free : ctx->min_nodes_capacity;
        if (used) {
                m->judged++;
                if (need && used > need) {
                        m->overspread++;
                        m->overspread_overcommitted += p->result == PLAN_OVERCOMMITTED;
                }
        }
        for (unsigned v = 0; v < p->nvcpus; v++) {
                double d;
                if (p->vcpu_pu[v] < 0)
                        continue;
                d = memory_distance(t, p, occupancy_pu_node(t, (unsigned)p->vcpu_pu[v]));
                if (d < 0)
                        continue;
                m->distance_sum += d;
                m->distance_vcpus++;
                if (p->result == PLAN_PLACED) {
                        m->distance_placed_sum += d;
                        m->distance_placed_vcpus++;
                }
        }
}

void metrics_record_state(QualityMetrics *m, const Occupancy *o, GPtrArray *plans, unsigned largest_fit,
                          double dt)
{
        unsigned shared = 0, resident = 0;

        if (dt <= 0)
                return;
        for (unsigned i = 0; i < plans->len; i++) {
                const Plan *p = g_ptr_array_index(plans, i);
                shared += metrics_shared_vcpus(o, p);
                for (unsigned v = 0; v < p->nvcpus; v++)
                        resident += p->vcpu_pu[v] >= 0;
        }
        m->shared_time += shared * dt;
        m->vcpu_time += resident * dt;
        m->fit_time += largest_fit * dt;
        m->window += dt;
        if (!m->fit_seen || largest_fit < m->fit_min)
                m->fit_min = largest_fit;
        m->fit_seen = true;
}

double metrics_shared_share(const QualityMetrics *m)
{
        return m->vcpu_time > 0 ? 100.0 * m->shared_time / m->vcpu_time : 0;
}

double metrics_start_shared_share(const QualityMetrics *m)
{
        return m->vcpus_started ? 100.0 * (double)m->shared_at_start / (double)m->vcpus_started : 0;
}

double metrics_overspread_share(const QualityMetrics *m)
{
        return m->judged ? 100.0 * m->overspread / m->judged : 0;
}

double metrics_mean_distance(const QualityMetrics *m)
{
        return m->distance_vcpus ? m->distance_sum / (double)m->distance_vcpus : 0;
}

double metrics_mean_distance_placed(const QualityMetrics *m)
{
        return m->distance_placed_vcpus ? m->distance_placed_sum / (double)m->distance_placed_vcpus : 0;
}

double metrics_fit_mean(const QualityMetrics *m)
{
        return m->window > 0 ? m->fit_time / m->window : 0;
}
