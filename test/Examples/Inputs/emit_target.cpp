// A minimal code generator for new-target.test: reads a plain description,
// infers the default plans and lowers them for a target of the table it was
// linked with (spec/lib/Target.cpp, compiled there against a Targets.def
// with one more row). MLIR-free, like the lowering itself.
//   emit_target DESC TARGET OUTDIR
#include "purlin/Plan/Plan.h"
#include "purlin/spec/Target.h"

#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char **argv) {
  if (argc != 4) {
    std::cerr << "usage: emit_target DESC TARGET OUTDIR\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  purlin::Collective c;
  std::vector<purlin::Plan> plans;
  std::string error, source, header;
  if (!purlin::readDesc(text.str(), c, error) ||
      !purlin::inferPlans(c, purlin::InferOptions(), plans, error) ||
      !purlin::emitCode(c, plans, argv[2], source, header, error)) {
    std::cerr << "emit_target: " << error << "\n";
    return 1;
  }
  const purlin::TargetInfo *t = purlin::findTarget(argv[2]);
  std::string base = std::string(argv[3]) + "/" + c.name + ".purlin.";
  std::ofstream(base + t->ext) << source;
  std::ofstream(base + "h") << header;
  return 0;
}
