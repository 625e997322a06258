#include "plugins/default_binder/default_binder.h"

#include <gtest/gtest.h>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::PodWrapper;

TEST(DefaultBinderTest, NoClientIsError) {
  testutil::FakeHandle h;
  auto pl = makePlugin(defaultBinderFactory(), nullptr, h);
  EXPECT_EQ(pl->name(), "DefaultBinder");
  auto* binder = dynamic_cast<BindPlugin*>(pl.get());
  ASSERT_NE(binder, nullptr);
  CycleState state;
  Status s = binder->bind(state, PodWrapper().obj(), "n1");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "no API client");
}

TEST(DefaultBinderTest, BindsThroughTheApiAndKeepsItsHttpCode) {
  testutil::FakeHandle h;
  testutil::FakeClusterApi api;
  h.setApi(&api);
  auto pl = makePlugin(defaultBinderFactory(), nullptr, h);
  auto* binder = dynamic_cast<BindPlugin*>(pl.get());
  ASSERT_NE(binder, nullptr);
  CycleState state;
  const api::Pod pod = PodWrapper("web-0").ns("prod").obj();
  EXPECT_TRUE(binder->bind(state, pod, "node-7").ok());
  ASSERT_EQ(api.calls().size(), 1u);
  EXPECT_EQ(api.calls()[0].verb, "bind");
  EXPECT_EQ(api.calls()[0].target, "prod/web-0");
  EXPECT_EQ(api.calls()[0].body, "node-7");

  // Bound already: the scheduler reads the 409 from the status, not from its text.
  api.failWith(ApiError{409, "Conflict",
                        "POST /api/v1/namespaces/prod/pods/web-0/binding: 409 "
                        "Conflict: pod web-0 is already assigned to node n1"});
  Status s = binder->bind(state, pod, "node-7");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.httpCode(), 409);
  EXPECT_NE(s.message().find("already assigned"), std::string::npos);
  api.failWith(ApiError{0, "", "POST ...: connection refused"});
  EXPECT_EQ(binder->bind(state, pod, "node-7").httpCode(), 0);
}

}  // namespace
}  // namespace ksched::plugins
