// See searcher_metrics.h.
#include "searcher/daemon/searcher_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace protuner {

SearcherMetrics::SearcherMetrics(prometheus::Registry &registry) {
  auto &jobs = prometheus::BuildCounter()
                   .Name("protuner_searcher_jobs_total")
                   .Help("Jobs this searcher took, by kind and by how they ended: done "
                         "(acknowledged), given_back (failed or stopped) or lost (taken over)")
                   .Register(registry);
  for (farm::JobKind kind : {farm::JobKind::kSearch, farm::JobKind::kBaselines}) {
    const char *outcomes[] = {"done", "given_back", "lost"};
    for (int o = 0; o < 3; ++o) {
      jobs_[static_cast<int>(kind)][o] =
          &jobs.Add({{"kind", farm::job_kind_name(kind)}, {"outcome", outcomes[o]}});
    }
  }
  auto &measured = prometheus::BuildCounter()
                       .Name("protuner_searcher_measurements_total")
                       .Help("Candidates measured by the measurers and written to Redis, by "
                             "result status")
                       .Register(registry);
  for (MeasureStatus s : all_statuses()) {
    measured_[static_cast<int>(s)] = &measured.Add({{"status", status_name(s)}});
  }
  cache_hits_ = &prometheus::BuildCounter()
                     .Name("protuner_searcher_cache_hits_total")
                     .Help("Candidates whose answer was already in Redis, not measured again")
                     .Register(registry)
                     .Add({});
  write_errors_ = &prometheus::BuildCounter()
                       .Name("protuner_searcher_write_errors_total")
                       .Help("Answers Redis could not take (their job is not acknowledged)")
                       .Register(registry)
                       .Add({});
  joins_ = &prometheus::BuildCounter()
                .Name("protuner_searcher_joins_total")
                .Help("Search jobs this searcher added to running apps, finding the queue empty")
                .Register(registry)
                .Add({});
  rollouts_ = &prometheus::BuildCounter()
                   .Name("protuner_searcher_rollouts_total")
                   .Help(
                       "Complete schedules this searcher's searches reached (MCTS rollouts, "
                       "beam and random samples): search throughput")
                   .Register(registry)
                   .Add({});
  decisions_ = &prometheus::BuildCounter()
                    .Name("protuner_searcher_decisions_total")
                    .Help("Root decisions this searcher's MCTS searches took")
                    .Register(registry)
                    .Add({});
  busy_ = &prometheus::BuildGauge()
               .Name("protuner_searcher_busy")
               .Help("1 while the searcher runs a job")
               .Register(registry)
               .Add({});
}

void SearcherMetrics::job_started() { busy_->Set(1); }

void SearcherMetrics::job_ended(farm::JobKind kind, JobOutcome outcome) {
  busy_->Set(0);
  jobs_[static_cast<int>(kind)][static_cast<int>(outcome)]->Increment();
}

void SearcherMetrics::measured(MeasureStatus status) {
  measured_[static_cast<int>(status)]->Increment();
}

void SearcherMetrics::cache_hit() { cache_hits_->Increment(); }

void SearcherMetrics::write_error() { write_errors_->Increment(); }

void SearcherMetrics::joined() { joins_->Increment(); }

void SearcherMetrics::searched(int64_t rollouts, int64_t decisions) {
  if (rollouts > 0) rollouts_->Increment(static_cast<double>(rollouts));
  if (decisions > 0) decisions_->Increment(static_cast<double>(decisions));
}

}  // namespace protuner
