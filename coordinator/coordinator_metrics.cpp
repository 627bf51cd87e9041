// See coordinator_metrics.h.
#include "coordinator/coordinator_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace protuner {

CoordinatorMetrics::CoordinatorMetrics(prometheus::Registry &registry) {
  const auto counter = [&](const char *name, const char *help) {
    return &prometheus::BuildCounter().Name(name).Help(help).Register(registry).Add({});
  };
  lease_held_ = &prometheus::BuildGauge()
                     .Name("protuner_coordinator_lease_held")
                     .Help("1 while this coordinator holds the lease (is the active one)")
                     .Register(registry)
                     .Add({});
  takeovers_ = counter("protuner_coordinator_takeovers_total",
                       "Times this coordinator acquired the lease");
  suites_queued_ = counter("protuner_coordinator_suites_queued_total",
                           "Submitted suites this coordinator turned into jobs");
  suites_finished_ = counter("protuner_coordinator_suites_finished_total",
                             "Suites this coordinator finished (every app final)");
  tick_errors_ = counter("protuner_coordinator_tick_errors_total",
                         "Ticks that failed (Redis away, an unreadable record) and are repeated");
  auto &apps = prometheus::BuildCounter()
                   .Name("protuner_coordinator_apps_finished_total")
                   .Help("Apps this coordinator finished at their deadline or last job, by "
                         "phase (cancelled apps are finished by `protuner cancel`)")
                   .Register(registry);
  for (farm::AppPhase phase : {farm::AppPhase::kDone, farm::AppPhase::kFailed}) {
    apps_finished_[static_cast<int>(phase)] = &apps.Add({{"phase", farm::app_phase_name(phase)}});
  }
  auto &jobs = prometheus::BuildGauge()
                   .Name("protuner_farm_jobs")
                   .Help("Jobs in the farm's queue: waiting (not taken), running (taken, not "
                         "acknowledged) and dead (dead-lettered)")
                   .Register(registry);
  waiting_ = &jobs.Add({{"state", "waiting"}});
  running_ = &jobs.Add({{"state", "running"}});
  dead_ = &jobs.Add({{"state", "dead"}});
}

void CoordinatorMetrics::lease(bool held) { lease_held_->Set(held ? 1 : 0); }

void CoordinatorMetrics::takeover() { takeovers_->Increment(); }

void CoordinatorMetrics::suite_queued() { suites_queued_->Increment(); }

void CoordinatorMetrics::suite_finished() { suites_finished_->Increment(); }

void CoordinatorMetrics::app_finished(farm::AppPhase phase) {
  if (prometheus::Counter *c = apps_finished_[static_cast<int>(phase)]) c->Increment();
}

void CoordinatorMetrics::queue_depths(const farm::QueueDepths &depths) {
  waiting_->Set(static_cast<double>(depths.waiting));
  running_->Set(static_cast<double>(depths.running));
  dead_->Set(static_cast<double>(depths.dead));
}

void CoordinatorMetrics::tick_error() { tick_errors_->Increment(); }

}  // namespace protuner
