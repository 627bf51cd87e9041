// See library_fetching_backend.h.
#include "measurer/library_fetching_backend.h"

#include "common/errors.h"
#include "common/farm/library_store.h"

namespace protuner {
namespace {

MeasureResult refused(MeasureStatus status, std::string error) {
  MeasureResult r;
  r.status = status;
  r.error = std::move(error);
  return r;
}

}  // namespace

LibraryFetchingBackend::LibraryFetchingBackend(std::unique_ptr<MeasurementBackend> inner,
                                               RedisOptions redis, std::string cache_dir)
    : inner_(std::move(inner)), redis_(std::move(redis)), cache_dir_(std::move(cache_dir)) {}

MeasureResult LibraryFetchingBackend::measure(const MeasureRequest &request) {
  if (request.library_sha256.empty()) {
    return refused(MeasureStatus::kBadRequest,
                   "this measurer loads only libraries stored in the farm's Redis by hash; "
                   "the request for " + request.app.name + " names the path '" +
                       request.app.library + "' and no library_sha256");
  }
  MeasureRequest fetched = request;
  try {
    if (!farm::library_stored(redis_, request.library_sha256)) {
      return refused(MeasureStatus::kBadRequest, "the farm's Redis holds no library " +
                                                     request.library_sha256 + " (for " +
                                                     request.app.name + ")");
    }
    fetched.app.library = farm::fetch_library(redis_, request.library_sha256, cache_dir_);
  } catch (const ConfigError &e) {
    return refused(MeasureStatus::kBadRequest, e.what());  // not a hash
  } catch (const IoError &e) {
    // Redis away, or a local cache this measurer cannot write: not the candidate's doing.
    return refused(MeasureStatus::kMeasurerError,
                   std::string("cannot fetch the library of ") + request.app.name + ": " +
                       e.what());
  }
  return inner_->measure(fetched);
}

}  // namespace protuner
