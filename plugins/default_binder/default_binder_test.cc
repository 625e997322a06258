#include "plugins/default_binder/default_binder.h"

#include <gtest/gtest.h>

#include "plugins/testing/plugin_test_util.h"

namespace ksched::plugins {
namespace {

using testutil::PodWrapper;

TEST(DefaultBinderTest, BindingPathAndBody) {
  const api::Pod pod = PodWrapper("web-0").ns("prod").uid("1234").obj();
  EXPECT_EQ(DefaultBinder::bindingPath(pod), "/api/v1/namespaces/prod/pods/web-0/binding");
  EXPECT_EQ(DefaultBinder::bindingBody(pod, "node-7"), nlohmann::json::parse(R"({
    "apiVersion": "v1",
    "kind": "Binding",
    "metadata": {"name": "web-0", "namespace": "prod", "uid": "1234"},
    "target": {"apiVersion": "v1", "kind": "Node", "name": "node-7"}
  })"));
}

TEST(DefaultBinderTest, NoClientIsError) {
  testutil::FakeHandle h;
  auto pl = newDefaultBinder(nullptr, h);
  EXPECT_EQ(pl->name(), "DefaultBinder");
  auto* binder = dynamic_cast<BindPlugin*>(pl.get());
  ASSERT_NE(binder, nullptr);
  CycleState state;
  Status s = binder->bind(state, PodWrapper().obj(), "n1");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.message(), "no API client");
}

}  // namespace
}  // namespace ksched::plugins
