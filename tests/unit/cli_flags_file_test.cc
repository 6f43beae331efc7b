// applyFlagsFile: the YAML config file of `minik8s server|agent|image registry --config`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli/flags_file.h"

namespace minik8s::cli {
namespace {

class FlagsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cmd_.add_option("--data-dir", dataDir_);
    cmd_.add_option("--listen", listen_);
    cmd_.add_option("--max-pods", maxPods_);
    cmd_.add_flag("--leader-elect", leaderElect_);
    cmd_.add_option("--controllers", controllers_)->delimiter(',');
    cmd_.add_option("--config", config_);
  }
  std::string write(const std::string& text) {
    // One file per process and test: ctest runs the cases of this fixture at once, each in its
    // own process, and a shared name let one case read another's YAML.
    path_ = ::testing::TempDir() + "flags_file_test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".yaml";
    std::ofstream(path_) << text;
    return path_;
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }

  CLI::App cmd_{"test", "server"};
  std::string dataDir_ = "/default", listen_ = "0.0.0.0:6443", config_, path_;
  int maxPods_ = 110;
  bool leaderElect_ = true;
  std::vector<std::string> controllers_;
};

TEST_F(FlagsFileTest, SetsEachKindOfFlagFromItsLongName) {
  std::string file = write(
      "data-dir: /var/lib/minik8s\n"
      "max-pods: 30\n"
      "leader-elect: false\n"
      "controllers: ['*', -garbagecollector]\n");
  ASSERT_TRUE(applyFlagsFile(cmd_, file).ok());
  EXPECT_EQ(dataDir_, "/var/lib/minik8s");
  EXPECT_EQ(maxPods_, 30);
  EXPECT_FALSE(leaderElect_);
  EXPECT_EQ(controllers_, (std::vector<std::string>{"*", "-garbagecollector"}));
  EXPECT_EQ(listen_, "0.0.0.0:6443");  // not in the file: the default stays
}

TEST_F(FlagsFileTest, TheCommandLineWins) {
  cmd_.parse("--listen 127.0.0.1:7443 --leader-elect", false);
  std::string file = write("listen: 0.0.0.0:9443\nleader-elect: false\ndata-dir: /d\n");
  ASSERT_TRUE(applyFlagsFile(cmd_, file).ok());
  EXPECT_EQ(listen_, "127.0.0.1:7443");
  EXPECT_TRUE(leaderElect_);
  EXPECT_EQ(dataDir_, "/d");
}

TEST_F(FlagsFileTest, CommaSeparatedStringsSplitLikeTheCommandLine) {
  ASSERT_TRUE(applyFlagsFile(cmd_, write("controllers: '*,-podgc'\n")).ok());
  EXPECT_EQ(controllers_, (std::vector<std::string>{"*", "-podgc"}));
}

TEST_F(FlagsFileTest, UnknownKeysAreRefusedWithTheFileAndKey) {
  std::string file = write("data-dir: /d\nlisten-address: x\n");
  Status s = applyFlagsFile(cmd_, file);
  EXPECT_EQ(s.code(), 400);
  EXPECT_NE(s.message().find(file + ": listen-address: unknown flag --listen-address"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(applyFlagsFile(cmd_, write("config: other.yaml\n")).code(), 400);
  EXPECT_EQ(applyFlagsFile(cmd_, write("--listen: x\n")).code(), 400);
}

TEST_F(FlagsFileTest, KeysOfAnotherReaderAreSkipped) {
  std::string file = write("name: node-b\nlabels: {disk: ssd}\nlisten: 1.2.3.4:10250\n");
  ASSERT_TRUE(applyFlagsFile(cmd_, file, {"name", "labels"}).ok());
  EXPECT_EQ(listen_, "1.2.3.4:10250");
}

TEST_F(FlagsFileTest, BadValuesAreClearErrors) {
  Status s = applyFlagsFile(cmd_, write("max-pods: many\n"));
  EXPECT_EQ(s.code(), 400);
  EXPECT_NE(s.message().find(": max-pods: "), std::string::npos) << s.message();
  s = applyFlagsFile(cmd_, write("listen: {host: a}\n"));
  EXPECT_EQ(s.code(), 400);
  EXPECT_NE(s.message().find("listen: expected a string, number or boolean"), std::string::npos)
      << s.message();
  s = applyFlagsFile(cmd_, write("- data-dir\n"));
  EXPECT_NE(s.message().find("expected a mapping of flag names"), std::string::npos);
  s = applyFlagsFile(cmd_, write("data-dir: [unclosed\n"));
  EXPECT_EQ(s.code(), 400);
  EXPECT_EQ(applyFlagsFile(cmd_, "/nonexistent/minik8s.yaml").code(), 400);
}

TEST_F(FlagsFileTest, EmptyFilesAndNullValuesSetNothing) {
  ASSERT_TRUE(applyFlagsFile(cmd_, write("")).ok());
  ASSERT_TRUE(applyFlagsFile(cmd_, write("# only a comment\n")).ok());
  ASSERT_TRUE(applyFlagsFile(cmd_, write("data-dir: ~\n")).ok());
  EXPECT_EQ(dataDir_, "/default");
}

}  // namespace
}  // namespace minik8s::cli
