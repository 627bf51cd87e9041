// The measurement backend a measurer serving the farm runs (protuner-measurerd --redis):
// it loads only generator libraries stored in the farm's Redis by hash (submitted with
// `protuner submit`, common/farm/library_store.h), never a path a request names. Each
// request must carry its library's SHA-256; the library is fetched into a local cache,
// checked against the hash, and the inner backend measures it from there. A request
// without a hash, or with one Redis does not hold, is refused as bad_request, naming it;
// Redis being away is a measurer_error (nothing to do with the candidate: the client
// retries elsewhere).
//
// Thread safety: one measure() at a time (the daemon measures one request at a time).
#pragma once

#include <memory>
#include <string>

#include "common/redis_client.h"
#include "measurer/measurement.h"

namespace protuner {

class LibraryFetchingBackend : public MeasurementBackend {
 public:
  // `cache_dir` holds the fetched libraries (created when missing).
  LibraryFetchingBackend(std::unique_ptr<MeasurementBackend> inner, RedisOptions redis,
                         std::string cache_dir);

  MeasureResult measure(const MeasureRequest &request) override;

 private:
  std::unique_ptr<MeasurementBackend> inner_;
  RedisClient redis_;
  std::string cache_dir_;
};

}  // namespace protuner
