#include <gtest/gtest.h>

#include <memory>
#include <string>

#include <ksched/cycle_state.h>

namespace ksched {
namespace {

struct Counter : StateData {
  explicit Counter(int v) : value(v) {}
  int value;
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<Counter>(*this);
  }
};

struct LabelledCounter : Counter {
  LabelledCounter(int v, std::string l) : Counter(v), label(std::move(l)) {}
  std::string label;
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<LabelledCounter>(*this);
  }
};

struct Other : StateData {
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<Other>(*this);
  }
};

constexpr StateKey<Counter> kCounter{"PreFilterCounter"};
constexpr StateKey<LabelledCounter> kLabelled{"PreFilterCounter"};
constexpr StateKey<Other> kOtherSameName{"PreFilterCounter"};
constexpr StateKey<Counter> kSameLength{"PreScoreCounters"};  // as long as kCounter's name

TEST(CycleStateTest, ReadsWhatWasWrittenUnderThatNameOnly) {
  CycleState state;
  EXPECT_EQ(state.read(kCounter), nullptr);
  state.write(kCounter, std::make_unique<Counter>(1));
  state.write(kSameLength, std::make_unique<Counter>(2));
  ASSERT_NE(state.read(kCounter), nullptr);
  EXPECT_EQ(state.read(kCounter)->value, 1);
  EXPECT_EQ(state.read(kSameLength)->value, 2);
  // A key spelled elsewhere (another string's storage) finds the same entry.
  const std::string spelled = "PreFilterCounter";
  EXPECT_EQ(state.read(StateKey<Counter>{spelled})->value, 1);
  EXPECT_EQ(state.read(StateKey<Counter>{"PreFilterCounte"}), nullptr);
}

TEST(CycleStateTest, AnotherTypeReadsNullAndBaseAndDerivedCastAsBefore) {
  CycleState state;
  state.write(kLabelled, std::make_unique<LabelledCounter>(3, "x"));
  EXPECT_EQ(state.read(kOtherSameName), nullptr);
  ASSERT_NE(state.read(kCounter), nullptr);  // read as its base
  EXPECT_EQ(state.read(kCounter)->value, 3);
  EXPECT_EQ(state.read(kLabelled)->label, "x");

  // Written as the base, holding a derived object: still found as the derived type.
  state.write(kCounter, std::unique_ptr<Counter>(std::make_unique<LabelledCounter>(4, "y")));
  ASSERT_NE(state.read(kLabelled), nullptr);
  EXPECT_EQ(state.read(kLabelled)->label, "y");
  // Written as the base, holding the base: not the derived type.
  state.write(kCounter, std::make_unique<Counter>(5));
  EXPECT_EQ(state.read(kLabelled), nullptr);
  EXPECT_EQ(state.read(kCounter)->value, 5);
}

TEST(CycleStateTest, OverwriteEraseAndMutableRead) {
  CycleState state;
  state.write(kCounter, std::make_unique<Counter>(1));
  state.write(kCounter, std::make_unique<Counter>(7));
  EXPECT_EQ(state.read(kCounter)->value, 7);
  state.mutableRead(kCounter)->value = 8;
  EXPECT_EQ(state.read(kCounter)->value, 8);
  state.write(kSameLength, std::make_unique<Counter>(9));
  state.erase("PreFilterCounter");
  EXPECT_EQ(state.read(kCounter), nullptr);
  EXPECT_EQ(state.read(kSameLength)->value, 9);
  state.erase("absent");
  EXPECT_EQ(state.read(kSameLength)->value, 9);
}

TEST(CycleStateTest, CloneCopiesEveryValueDeeply) {
  CycleState state;
  state.write(kCounter, std::make_unique<Counter>(1));
  state.write(kSameLength, std::make_unique<Counter>(2));
  state.skipFilterPlugins.insert("NodePorts");
  CycleState copy = state.clone();
  copy.mutableRead(kCounter)->value = 10;
  EXPECT_EQ(state.read(kCounter)->value, 1);
  EXPECT_EQ(copy.read(kCounter)->value, 10);
  EXPECT_EQ(copy.read(kSameLength)->value, 2);
  EXPECT_TRUE(copy.skipFilterPlugins.contains("NodePorts"));
}

}  // namespace
}  // namespace ksched
