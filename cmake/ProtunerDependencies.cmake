# Finds every third-party dependency, all from Debian 12 packages (scripts/install-deps.sh).
# Each is a CMake package or pkg-config module; targets without an upstream imported
# target get one here so component CMakeLists only name targets.

find_package(Halide 14 REQUIRED)
find_package(Torch REQUIRED)
find_package(cppzmq REQUIRED)           # brings libzmq
find_package(prometheus-cpp REQUIRED)
find_package(GTest REQUIRED)
find_package(benchmark REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(spdlog REQUIRED)
find_package(Threads REQUIRED)

# Debian's hiredis ships a Config file without an imported target; pkg-config has it.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
add_library(protuner::hiredis ALIAS PkgConfig::HIREDIS)

# libtorch's CMake config exports a plain list; wrap it in one interface target.
add_library(protuner_torch INTERFACE)
target_link_libraries(protuner_torch INTERFACE ${TORCH_LIBRARIES})
target_include_directories(protuner_torch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
add_library(protuner::torch ALIAS protuner_torch)

find_program(REDIS_SERVER_EXECUTABLE redis-server REQUIRED)
# The dashboards' test scrapes the daemons with a real Prometheus.
find_program(PROMETHEUS_EXECUTABLE prometheus REQUIRED)

# libsodium (SHA-256 of generator libraries); libzmq is built with it for CURVE.
pkg_check_modules(SODIUM REQUIRED IMPORTED_TARGET libsodium)
add_library(protuner::sodium ALIAS PkgConfig::SODIUM)
