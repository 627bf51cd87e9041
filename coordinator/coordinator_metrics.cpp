// See coordinator_metrics.h.
#include "coordinator/coordinator_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
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
  const auto app_gauge = [&](const char *name, const char *help) {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(registry);
  };
  app_best_ = app_gauge("protuner_app_best_seconds",
                        "The fastest schedule measured so far for the app (its min time)");
  app_speedup_ = app_gauge("protuner_app_speedup",
                           "A baseline's time over the app's best so far, by baseline "
                           "(default, own, Adams2019): above 1 is faster than the baseline");
  app_measurements_ = app_gauge("protuner_app_measurements",
                                "Candidates of the app measured so far, farm-wide");
  app_failures_ = app_gauge("protuner_app_failures",
                            "Of those, the ones that did not measure ok");
  app_budget_used_ = app_gauge("protuner_app_budget_used_ratio",
                               "Wall clock since the app started over its budget (0 before "
                               "it starts; its final value once it finishes)");
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

void CoordinatorMetrics::app_progress(
    const std::string &suite, const std::string &app, const farm::AppState &state,
    const std::map<std::string, farm::MeasuredCandidate> &baselines, int64_t now_ms) {
  const prometheus::Labels labels{{"suite", suite}, {"app", app}};
  app_measurements_->Add(labels).Set(static_cast<double>(state.measurements));
  app_failures_->Add(labels).Set(static_cast<double>(state.failures));
  double used = 0;
  if (state.started_ms && state.budget_ms > 0) {
    const int64_t until = state.finished_ms.value_or(now_ms);
    used = static_cast<double>(until - *state.started_ms) / static_cast<double>(state.budget_ms);
  }
  app_budget_used_->Add(labels).Set(used);
  if (!state.best_ms || *state.best_ms <= 0) return;
  app_best_->Add(labels).Set(*state.best_ms / 1000.0);
  for (const auto &[name, baseline] : baselines) {
    if (!baseline.min_ms) continue;  // a baseline that did not measure ok has no speedup
    app_speedup_->Add({{"suite", suite}, {"app", app}, {"baseline", name}})
        .Set(*baseline.min_ms / *state.best_ms);
  }
}

void CoordinatorMetrics::tick_error() { tick_errors_->Increment(); }

}  // namespace protuner
