#include "common/metrics_server.h"

#include <prometheus/exposer.h>
#include <prometheus/registry.h>

#include "common/errors.h"

namespace protuner {

MetricsServer::MetricsServer(const std::string &bind_address)
    : registry_(std::make_shared<prometheus::Registry>()) {
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(bind_address);
  } catch (const std::exception &e) {
    throw IoError("metrics: cannot serve on " + bind_address + ": " + e.what());
  }
  exposer_->RegisterCollectable(registry_);
  const auto ports = exposer_->GetListeningPorts();
  if (ports.empty()) throw IoError("metrics: no listening port for " + bind_address);
  port_ = ports.front();
}

MetricsServer::~MetricsServer() = default;

}  // namespace protuner
