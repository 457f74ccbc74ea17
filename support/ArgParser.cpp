#include "support/ArgParser.h"

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace tpu {

void ArgParser::option(const std::string &name, const std::string &help,
                       const std::string &alias) {
  specs_[name] = {help, true};
  if (!alias.empty()) aliases_[alias] = name;
}

void ArgParser::flag(const std::string &name, const std::string &help) {
  specs_[name] = {help, false};
}

void ArgParser::positionals(size_t min, size_t max, const std::string &names) {
  minPos_ = min;
  maxPos_ = max;
  positionalNames_ = names;
}

Status ArgParser::parse(int argc, char **argv) {
  return parse(std::vector<std::string>(argv, argv + argc));
}

Status ArgParser::parse(const std::vector<std::string> &args) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "-h" || a == "--help") {
      help_ = true;
      return Status::ok();
    }
    if (a.size() > 1 && a[0] == '-' && !(a.size() > 1 && (isdigit(a[1]) || a[1] == '.'))) {
      std::string name = a, value;
      bool inlineValue = false;
      if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
        name = a.substr(0, eq);
        value = a.substr(eq + 1);
        inlineValue = true;
      }
      if (auto al = aliases_.find(name); al != aliases_.end()) name = al->second;
      auto spec = specs_.find(name);
      if (spec == specs_.end())
        return makeError(command_, ": unknown option '", name, "' (see --help)");
      if (!spec->second.takesValue) {
        if (inlineValue)
          return makeError(command_, ": option '", name, "' takes no value");
        flags_[name] = true;
        continue;
      }
      if (!inlineValue) {
        if (i + 1 >= args.size())
          return makeError(command_, ": option '", name, "' needs a value");
        value = args[++i];
      }
      values_[name] = value;
      continue;
    }
    positional_.push_back(a);
  }
  if (positional_.size() < minPos_)
    return makeError(command_, ": missing argument ", positionalNames_, " (see --help)");
  if (positional_.size() > maxPos_)
    return makeError(command_, ": unexpected argument '", positional_[maxPos_], "'");
  return Status::ok();
}

std::string ArgParser::get(const std::string &name, const std::string &dflt) const {
  auto it = values_.find(name);
  return it == values_.end() ? dflt : it->second;
}

Result<long long> ArgParser::getInt(const std::string &name, long long dflt) const {
  auto it = values_.find(name);
  if (it == values_.end()) return dflt;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(it->second.c_str(), &end, 0);
  if (errno || end == it->second.c_str() || *end)
    return makeError(command_, ": option '", name, "' expects an integer, got '", it->second, "'");
  return v;
}

Result<double> ArgParser::getDouble(const std::string &name, double dflt) const {
  auto it = values_.find(name);
  if (it == values_.end()) return dflt;
  errno = 0;
  char *end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (errno || end == it->second.c_str() || *end)
    return makeError(command_, ": option '", name, "' expects a number, got '", it->second, "'");
  return v;
}

std::string ArgParser::help() const {
  std::ostringstream os;
  os << "usage: tpuc " << command_ << " " << usage_ << "\n";
  for (const auto &[name, spec] : specs_) {
    std::string shown = name;
    for (const auto &[al, target] : aliases_)
      if (target == name) shown = al + ", " + name;
    os << "  " << shown << (spec.takesValue ? " VALUE" : "") << "\n      " << spec.help << "\n";
  }
  return os.str();
}

} // namespace tpu
