// batonc — the baton DSL compiler: .baton file -> proven sync policies and tile orders as a C++
// header. See docs/batonc.md.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "baton/dsl/analysis.hpp"
#include "baton/dsl/check.hpp"
#include "baton/dsl/emit.hpp"

namespace {

const char* kUsage =
    "usage: batonc FILE.baton [-o OUT.hpp] [--namespace NS] [--set NAME=VALUE]... [--explain]\n"
    "              [--relation 'P -> C : RELATION(ARG = VALUE, ...)']...\n"
    "              [--check 'PRODUCER->CONSUMER=POLICY[@FOOTPRINT]']... [--verify OUT.hpp]\n"
    "Compiles a .baton program (stages, tensors, affine access maps; docs/batonc.md) into a C++ header of\n"
    "sync policies and tile orders, each proven by baton::check_soundness for every parameter binding\n"
    "the program lists (param M = 128 in {1, 17, 2048}).\n"
    "  -o OUT.hpp          write the header (only if its text changed); without -o and without --check,\n"
    "                      --explain or --verify the header goes to stdout\n"
    "  --namespace NS      the header's namespace (default baton_gen::<file stem>)\n"
    "  --set NAME=VALUE    override a parameter's value (the header's default and a proven binding)\n"
    "  --explain           print every edge's candidates, the choice and why, and the tile orders\n"
    "  --relation TEXT     a `relation` line given apart from the program: the edge's exact relation\n"
    "                      (conv_exact, gemm_a, causal_attention, one_to_one, transposed); the maps and\n"
    "                      every policy are proven against it too (replaces the program's for that edge)\n"
    "  --check SPEC        prove a hand-written policy for an edge instead of choosing one, against the\n"
    "                      maps and the edge's relation, if it has one:\n"
    "                        POLICY   tile | kblock | row | row per k | column | column per k | group(GM,GN) [per k]\n"
    "                                 (row_k, column_k, group_k(GM,GN) are accepted too)\n"
    "                        FOOTPRINT affine (the program's maps, default) | gemm_a | identity | transpose | all_of_batch\n"
    "                      e.g. --check 'gemm1->gemm2=row@gemm_a' (baton::RowPolicy<footprint::GemmA>, the MLP's)\n"
    "                      exit 0 when sound; 1 with the missed dependency when not\n"
    "  --verify OUT.hpp    exit 1 if OUT.hpp differs from what batonc would write (a stale generated header)\n"
    "  --help              this text\n"
    "Exit status: 0 success, 1 an error in the program, an unsound policy or a stale header, 2 bad usage.\n";

int fail(int code, const std::string& msg) {
  std::fprintf(stderr, "batonc: error: %s\n", msg.c_str());
  return code;
}

// The program a header names in its banner is not `file`: another name, or (both found from here)
// another file. The banner's path is as batonc was given it, possibly from another directory.
bool different_programs(const std::string& banner_path, const std::string& file) {
  namespace fs = std::filesystem;
  if (fs::path(banner_path).filename() != fs::path(file).filename()) return true;
  std::error_code e1, e2;
  const bool both = fs::exists(banner_path, e1) && fs::exists(file, e2);
  return both && !fs::equivalent(banner_path, file, e1);
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string file, out_path, ns, verify_path;
  bool explain = false;
  std::vector<std::string> checks, sets, relations;
  std::string command = "batonc";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) -> bool {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "-o") {
      if (!value(out_path)) return fail(2, "-o needs a path\n" + std::string(kUsage));
    } else if (a == "--namespace") {
      if (!value(ns)) return fail(2, "--namespace needs a name");
    } else if (a == "--set") {
      std::string s;
      if (!value(s)) return fail(2, "--set needs NAME=VALUE");
      sets.push_back(s);
    } else if (a == "--check") {
      std::string s;
      if (!value(s)) return fail(2, "--check needs PRODUCER->CONSUMER=POLICY");
      checks.push_back(s);
    } else if (a == "--relation") {
      std::string s;
      if (!value(s)) return fail(2, "--relation needs 'P -> C : RELATION(ARG = VALUE, ...)'");
      relations.push_back(s);
    } else if (a == "--verify") {
      if (!value(verify_path)) return fail(2, "--verify needs a path");
    } else if (a == "--explain") {
      explain = true;
    } else if (!a.empty() && a[0] == '-') {
      return fail(2, "unknown option '" + a + "'\n" + kUsage);
    } else if (file.empty()) {
      file = a;
    } else {
      return fail(2, "one input file only (got '" + file + "' and '" + a + "')");
    }
  }
  if (file.empty()) return fail(2, std::string("no input file\n") + kUsage);
  command += " " + file;
  if (!ns.empty()) command += " --namespace " + ns;
  for (const std::string& s : sets) command += " --set " + s;
  for (const std::string& r : relations) command += " --relation '" + r + "'";
  std::string source;
  if (!read_file(file, source)) return fail(1, "cannot read '" + file + "': " + std::strerror(errno));
  auto prog = baton::dsl::parse(file, source);
  if (!prog.ok()) return fail(1, prog.error().message());
  for (const std::string& s : sets) {
    baton::status st = baton::dsl::apply_set(prog.value(), s);
    if (!st.ok()) return fail(2, st.message());
  }
  for (size_t i = 0; i < relations.size(); ++i) {
    baton::status st = baton::dsl::add_relations(prog.value(), "--relation" + (relations.size() > 1 ? "#" + std::to_string(i + 1) : ""),
                                                 relations[i]);
    if (!st.ok()) return fail(2, st.message());
  }
  if (!checks.empty()) {
    // Hand-written policies are proven against the program's relation, replacing any choice.
    // The relation proofs happen per policy (check_policy), so the analysis leaves them out.
    auto an = baton::dsl::analyze(baton::dsl::without_syncs(prog.value()), baton::dsl::Analyzer::kProofBudget,
                                  baton::dsl::AnalyzeOptions{.prove_relations = false});
    if (!an.ok()) return fail(1, an.error().message());
    int rc = 0;
    for (const std::string& c : checks) {
      auto r = baton::dsl::check_policy(an.value(), c);
      if (!r.ok()) {
        std::fprintf(stderr, "batonc: %s\n", r.error().message().c_str());
        rc = r.error().code() == baton::errc::invalid_argument ? 2 : 1;
        if (rc == 2) return rc;
      } else {
        std::printf("%s\n", r.value().c_str());
      }
    }
    return rc;
  }
  auto an = baton::dsl::analyze(std::move(prog.value()));
  if (!an.ok()) return fail(1, an.error().message());
  if (explain) std::fputs(baton::dsl::explain(an.value()).c_str(), stdout);
  baton::dsl::EmitOptions eo;
  eo.ns = ns;
  // The banner names the header it is written to (or verified as), so both agree.
  const std::string target = out_path.empty() ? verify_path : out_path;
  eo.command = command + (target.empty() ? "" : " -o " + target);
  const std::string header = baton::dsl::emit_header(an.value(), eo);
  if (!verify_path.empty()) {
    std::string have;
    if (!read_file(verify_path, have)) return fail(1, "cannot read '" + verify_path + "' to verify it");
    if (have != header) {
      // A header generated from another program is not stale: say so rather than suggest overwriting it.
      const std::string banner = "// generated by batonc from ";
      if (have.rfind(banner, 0) == 0) {
        const size_t end = have.find(", do not edit");
        const std::string from = end == std::string::npos ? "" : have.substr(banner.size(), end - banner.size());
        if (!from.empty() && different_programs(from, file))
          return fail(1, "'" + verify_path + "' was generated from a different program ('" + from + "', not '" + file +
                             "'); verify it against that program");
      } else {
        return fail(1, "'" + verify_path + "' is not a header batonc generated (no '" + banner + "...' banner); check the path");
      }
      return fail(1, "'" + verify_path + "' is stale: it differs from what batonc generates from '" + file +
                         "'; regenerate it (" + eo.command + ")");
    }
    std::printf("batonc: %s is up to date\n", verify_path.c_str());
  }
  if (!out_path.empty()) {
    std::string have;
    if (!read_file(out_path, have) || have != header) {
      std::ofstream f(out_path, std::ios::binary | std::ios::trunc);
      if (!f) return fail(1, "cannot write '" + out_path + "'");
      f << header;
      if (!f.flush()) return fail(1, "writing '" + out_path + "' failed");
    }
  } else if (!explain && verify_path.empty()) {
    std::fputs(header.c_str(), stdout);
  }
  return 0;
}
