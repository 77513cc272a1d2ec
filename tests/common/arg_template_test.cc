// common/arg_template.h: {NAME} templates with {{ and }} escapes, as Python's str.format.
#include "common/arg_template.h"

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tunefleet {
namespace {

TEST(ArgTemplateTest, NamesInOrderOfFirstUse) {
  auto names = TemplateNames("--lr={lr} --b {batch_size} {lr}{trial_dir}/x");
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_EQ(*names, (std::vector<std::string>{"lr", "batch_size", "trial_dir"}));
  EXPECT_TRUE(TemplateNames("plain").value().empty());
  // Escaped braces name nothing.
  EXPECT_TRUE(TemplateNames("{{\"a\": 1}}").value().empty());
}

TEST(ArgTemplateTest, Renders) {
  const std::map<std::string, std::string> v = {{"lr", "0.001"}, {"model.dropout", "0.1"}};
  EXPECT_EQ(RenderTemplate("--lr={lr}", v).value(), "--lr=0.001");
  EXPECT_EQ(RenderTemplate("{lr}{lr}", v).value(), "0.0010.001");
  EXPECT_EQ(RenderTemplate("{model.dropout}", v).value(), "0.1");
  EXPECT_EQ(RenderTemplate("{{\"lr\": {lr}}}", v).value(), "{\"lr\": 0.001}");
  EXPECT_EQ(RenderTemplate("{{lr}}", v).value(), "{lr}");
  EXPECT_EQ(RenderTemplate("", v).value(), "");
  // A value holding braces is put in as it is, never read as a template.
  EXPECT_EQ(RenderTemplate("{x}", {{"x", "{lr}"}}).value(), "{lr}");
}

TEST(ArgTemplateTest, ErrorsSayWhereAndWhy) {
  EXPECT_EQ(TemplateNames("--lr={lr").status().message(),
            "an unclosed '{' at character 6 (a literal brace is '{{')");
  EXPECT_EQ(TemplateNames("a}b").status().message(),
            "a lone '}' at character 2 (a literal brace is '}}')");
  EXPECT_EQ(TemplateNames("x{}").status().message(), "'{}' at character 2 names nothing");
  EXPECT_EQ(TemplateNames("{a{b}").status().message(),
            "an unclosed '{' at character 1 (a literal brace is '{{')");
  auto missing = RenderTemplate("{lr} {nope}", {{"lr", "1"}});
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
  EXPECT_EQ(missing.status().message(), "{nope} names no value");
  // Names are taken exactly: spaces are part of them.
  EXPECT_EQ(TemplateNames("{ lr }").value(), (std::vector<std::string>{" lr "}));
}

}  // namespace
}  // namespace tunefleet
