// Templates of command-line arguments and environment values, as hpo fills in a program's
// (trainer.program, trainer.env): `{NAME}` stands for the value named NAME, `{{` and `}}` for a
// literal brace. Anything between the braces is the name, exactly (no spaces trimmed). A
// lone `}`, an unclosed `{` and `{}` are errors, as in Python's str.format.
//
//   TemplateNames("--lr={lr} --out={{x}}")        -> {"lr"}
//   RenderTemplate("--lr={lr}", {{"lr", "0.001"}}) -> "--lr=0.001"
//
// Thread-safety: pure functions.
#ifndef TUNEFLEET_COMMON_ARG_TEMPLATE_H_
#define TUNEFLEET_COMMON_ARG_TEMPLATE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tunefleet {

// The names `text` uses, in order of first use. Errors (InvalidArgument, no location): "an
// unclosed '{' at character 7 (a literal brace is '{{')", "a lone '}' at character 3 (a literal
// brace is '}}')", "'{}' at character 1 names nothing".
absl::StatusOr<std::vector<std::string>> TemplateNames(const std::string& text);

// `text` with each {NAME} replaced by values[NAME] and each {{ or }} by one brace. Errors: those
// of TemplateNames, and "{X} names no value" (NotFound) for a name `values` lacks.
absl::StatusOr<std::string> RenderTemplate(const std::string& text,
                                           const std::map<std::string, std::string>& values);

}  // namespace tunefleet

#endif  // TUNEFLEET_COMMON_ARG_TEMPLATE_H_
