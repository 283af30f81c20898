// StoreGalleryLinks (store_gallery_links.h) on real SQLite stores and a fake wall clock: no link
// before a page is served; the local principal's link is the plain page; a principal's carries a
// token that opens to that principal and session, on any process of the same store, until it
// expires; a token of another store, an altered one, or one that is no link is refused.
#include "server/tools/store_gallery_links.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "session/sqlite/sqlite_session_store.h"
#include "tests/unit/manual_clock.h"

namespace imgmcp::tools {
namespace {

constexpr char kPage[] = "https://images.example.com/gallery";
constexpr char kAlice[] = "a11ce";

mcp::Caller CallerOf(const std::string& principal) {
  mcp::Caller caller;
  caller.principal = principal;
  return caller;
}

std::string TokenOf(const std::string& link) {
  const size_t at = link.find("?link=");
  return at == std::string::npos ? "" : link.substr(at + 6);
}

class StoreGalleryLinksTest : public ::testing::Test {
 protected:
  std::unique_ptr<session::SessionStore> OpenStore(const std::string& name) {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() /
        ("imgmcp-links-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + name);
    std::filesystem::remove_all(dir);
    dirs_.push_back(dir);
    session::StoreOptions options;
    options.data_dir = dir;
    auto opened = session::sqlite::SqliteSessionStore::Open(options, clock_);
    EXPECT_TRUE(opened.ok()) << opened.error().message;
    return opened.ok() ? std::move(*opened) : nullptr;
  }
  void TearDown() override {
    for (const auto& dir : dirs_) std::filesystem::remove_all(dir);
  }

  test_util::ManualClock clock_;
  std::vector<std::filesystem::path> dirs_;
};

TEST_F(StoreGalleryLinksTest, LinksNameThePageTheSessionAndForAPrincipalAToken) {
  auto store = OpenStore("a");
  StoreGalleryLinks links(*store, std::chrono::seconds(600), clock_);
  EXPECT_FALSE(links.LinkFor(CallerOf(kAlice), "fox").has_value());  // no page served yet
  links.ServeAt(kPage);
  EXPECT_EQ(links.LinkFor(CallerOf(""), "fox").value(), std::string(kPage) + "#/sessions/fox");
  const std::string link = links.LinkFor(CallerOf(kAlice), "fox").value();
  EXPECT_EQ(link.rfind(std::string(kPage) + "#/sessions/fox?link=imgmcp-gallery.", 0), 0u) << link;
  const mcp::GalleryGrant grant = links.Open(TokenOf(link)).value();
  EXPECT_EQ(grant.principal, kAlice);
  EXPECT_EQ(grant.session_id, "fox");
}

TEST_F(StoreGalleryLinksTest, EveryProcessOfTheStoreOpensTheLinksOfAnother) {
  auto store = OpenStore("a");
  StoreGalleryLinks maker(*store, std::chrono::seconds(600), clock_);
  StoreGalleryLinks opener(*store, std::chrono::seconds(600), clock_);  // the key from the store
  maker.ServeAt(kPage);
  const std::string token = TokenOf(maker.LinkFor(CallerOf(kAlice), "fox").value());
  EXPECT_EQ(opener.Open(token).value().session_id, "fox");

  auto elsewhere = OpenStore("b");
  StoreGalleryLinks stranger(*elsewhere, std::chrono::seconds(600), clock_);
  EXPECT_EQ(stranger.Open(token).error().code, ErrorCode::kPermissionDenied);
}

TEST_F(StoreGalleryLinksTest, AlteredForeignAndExpiredTokensAreRefused) {
  auto store = OpenStore("a");
  StoreGalleryLinks links(*store, std::chrono::seconds(600), clock_);
  links.ServeAt(kPage);
  const std::string token = TokenOf(links.LinkFor(CallerOf(kAlice), "fox").value());
  std::string altered = token;
  altered[altered.size() - 1] = altered.back() == '0' ? '1' : '0';
  EXPECT_EQ(links.Open(altered).error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(links.Open("eyJhbGciOi.J9.x").error().code, ErrorCode::kPermissionDenied);
  EXPECT_EQ(links.Open(token.substr(std::string("imgmcp-gallery.").size())).error().code,
            ErrorCode::kPermissionDenied);  // the seal without the link's prefix

  clock_.Advance(std::chrono::seconds(600));
  EXPECT_TRUE(links.Open(token).ok());
  clock_.Advance(std::chrono::seconds(2));
  const Error expired = links.Open(token).error();
  EXPECT_EQ(expired.code, ErrorCode::kDeadlineExceeded);
  EXPECT_NE(expired.message.find("get_image"), std::string::npos) << expired.message;
}

}  // namespace
}  // namespace imgmcp::tools
