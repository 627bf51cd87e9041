// Generator libraries stored in and fetched from a real redis-server by content hash; the
// layout version check on the same server.
#include "common/farm/library_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "common/farm/redis_schema.h"
#include "common/redis_client.h"
#include "tests/support/loopback.h"

namespace protuner::farm {
namespace {

namespace fs = std::filesystem;

class LibraryStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("protuner_library_store_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string &name, const std::string &bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string cache() const { return (dir_ / "cache").string(); }

  testing::RedisServer server_;
  RedisClient redis_{"127.0.0.1", server_.port()};
  fs::path dir_;
};

std::string read(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(Sha256, MatchesTheStandardTestVector) {
  EXPECT_EQ(sha256_of_bytes("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_F(LibraryStoreTest, StoredLibraryIsFetchedByHashIntoTheCache) {
  const std::string bytes("\x7f" "ELF\0binary", 11);
  const std::string hash = store_library(redis_, write("lib.so", bytes));
  EXPECT_EQ(hash, sha256_of_bytes(bytes));
  EXPECT_TRUE(library_stored(redis_, hash));
  const std::string path = fetch_library(redis_, hash, cache());
  EXPECT_EQ(path, cache() + "/" + hash + ".so");
  EXPECT_EQ(read(path), bytes);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0500u);
  // Stored once: the same file again changes nothing.
  EXPECT_EQ(store_library(redis_, write("again.so", bytes)), hash);
}

TEST_F(LibraryStoreTest, CachedFileIsReusedWithoutRedisAndReplacedWhenItsBytesChanged) {
  const std::string hash = store_library(redis_, write("lib.so", "version one"));
  const std::string path = fetch_library(redis_, hash, cache());
  // Gone from Redis: the intact cached copy still serves.
  redis_.command({"DEL", library_key(hash)});
  EXPECT_EQ(fetch_library(redis_, hash, cache()), path);
  // A cached file whose bytes no longer match its name is never returned.
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(path, std::ios::binary) << "tampered";
  EXPECT_THROW(fetch_library(redis_, hash, cache()), IoError);
  store_library(redis_, write("lib.so", "version one"));
  EXPECT_EQ(read(fetch_library(redis_, hash, cache())), "version one");
}

TEST_F(LibraryStoreTest, RefusesBadHashesMissingLibrariesAndBytesThatDoNotMatch) {
  EXPECT_THROW(fetch_library(redis_, "../../etc/passwd", cache()), ConfigError);
  EXPECT_THROW(fetch_library(redis_, std::string(64, 'A'), cache()), ConfigError);
  const std::string missing = sha256_of_bytes("never stored");
  try {
    fetch_library(redis_, missing, cache());
    FAIL() << "fetched a library nobody stored";
  } catch (const IoError &e) {
    EXPECT_NE(std::string(e.what()).find("has no library " + missing), std::string::npos);
  }
  // Bytes under the wrong name (a corrupted or forged key) are refused and never cached.
  redis_.set(library_key(missing), "other bytes");
  EXPECT_THROW(fetch_library(redis_, missing, cache()), IoError);
  EXPECT_FALSE(fs::exists(cache() + "/" + missing + ".so"));
  EXPECT_THROW(store_library(redis_, (dir_ / "no-such.so").string()), IoError);
}

TEST_F(LibraryStoreTest, LayoutVersionIsRecordedOnceAndAnotherIsRefused) {
  check_layout(redis_);
  EXPECT_EQ(redis_.get(kLayoutKey), std::to_string(kLayoutVersion));
  check_layout(redis_);  // the same version again is fine
  redis_.set(kLayoutKey, std::to_string(kLayoutVersion + 1));
  try {
    check_layout(redis_);
    FAIL() << "accepted a database of a newer layout";
  } catch (const SchemaError &e) {
    EXPECT_NE(std::string(e.what()).find("holds '" + std::to_string(kLayoutVersion + 1) + "'"),
              std::string::npos)
        << e.what();
  }
}

TEST(RedisSchema, KeysCarryTheLayoutVersion) {
  EXPECT_EQ(jobs_stream(), "protuner:v" + std::to_string(kLayoutVersion) + ":jobs");
  EXPECT_EQ(library_key("ab"), "protuner:v" + std::to_string(kLayoutVersion) + ":library:ab");
  EXPECT_NO_THROW(check_record_schema(std::to_string(kLayoutVersion), "x"));
  EXPECT_THROW(check_record_schema("", "x"), SchemaError);
  EXPECT_THROW(check_record_schema("1x", "x"), SchemaError);
  EXPECT_THROW(check_record_schema(std::to_string(kLayoutVersion + 1), "x"), SchemaError);
}

}  // namespace
}  // namespace protuner::farm
