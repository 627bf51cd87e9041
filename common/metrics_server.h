// The Prometheus endpoint every protuner daemon exposes. One registry per process, served
// over HTTP at /metrics; components register their families on it once and keep the
// returned metric references (incrementing those is cheap, creating them is not).
//
// Thread safety: registry() may be used from any thread (prometheus-cpp registries are
// thread-safe). Not copyable or movable: the exposer's HTTP threads point into it.
#pragma once

#include <memory>
#include <string>

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace protuner {

class MetricsServer {
 public:
  // Serves on bind_address, "host:port"; port 0 picks a free port (see port()).
  // Throws IoError when the address cannot be bound.
  explicit MetricsServer(const std::string &bind_address);
  ~MetricsServer();
  MetricsServer(const MetricsServer &) = delete;
  MetricsServer &operator=(const MetricsServer &) = delete;

  prometheus::Registry &registry() { return *registry_; }
  // The port actually bound.
  int port() const { return port_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

}  // namespace protuner
