#include "purlin/Pipeline.h"

#include "purlin/Dialect/Layout/Convert.h"
#include "purlin/Dialect/Snac/Convert.h"
#include "purlin/Passes/Passes.h"
#include "purlin/Frontend/Parser.h"
#include "purlin/spec/Verify.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <fstream>

namespace purlin {

bool loadSource(const std::string &path, Source &out, std::string &error) {
  auto buf = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buf) {
    error = "cannot read '" + path + "': " + buf.getError().message();
    return false;
  }
  out.path = path == "-" ? "<stdin>" : path;
  out.text = (*buf)->getBuffer().str();
  return true;
}

void printDiag(llvm::raw_ostream &os, const Source &src, const Diag &d,
               const char *severity) {
  if (d.loc.line <= 0) {
    os << src.path << ": " << severity << ": " << d.message << "\n";
    return;
  }
  os << src.path << ":" << d.loc.line << ":" << d.loc.col << ": " << severity
     << ": " << d.message << "\n";
  // The source line, then a caret under the column (tabs kept, so that the
  // caret lines up however the terminal expands them).
  size_t begin = 0;
  for (int l = 1; l < d.loc.line && begin != std::string::npos; ++l) {
    begin = src.text.find('\n', begin);
    if (begin != std::string::npos)
      ++begin;
  }
  if (begin == std::string::npos || begin > src.text.size())
    return;
  size_t end = src.text.find('\n', begin);
  std::string line = src.text.substr(
      begin, end == std::string::npos ? std::string::npos : end - begin);
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  std::string caret;
  for (int i = 0; i + 1 < d.loc.col && i < (int)line.size(); ++i)
    caret += line[i] == '\t' ? '\t' : ' ';
  os << line << "\n" << caret << "^\n";
}

bool parseSource(const Source &src, Collective &out, llvm::raw_ostream &errs) {
  Diag d;
  if (parsePurlin(src.text, out, d))
    return true;
  printDiag(errs, src, d);
  return false;
}

namespace {
bool isInteger(const std::string &s) {
  if (s.empty() || s.size() > 19)
    return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size())
    return false;
  for (; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9')
      return false;
  return true;
}

bool checkValue(const Param &p, const std::string &v, std::string &error) {
  DType t;
  RedOp r;
  switch (p.kind) {
  case ParamKind::Type:
    if (parseDType(v, t))
      return true;
    error = "unknown element type '" + v + "' for '" + p.name +
            "' (f32, f16, bf16, f8e4m3, f8e5m2, i8, u8, i32, i64, f64)";
    return false;
  case ParamKind::Op:
    if (parseRedOp(v, r) && r != RedOp::Copy)
      return true;
    error = "unknown reduction op '" + v + "' for '" + p.name +
            "' (sum, prod, min, max or avg)";
    return false;
  case ParamKind::Table: {
    size_t b = 0;
    for (;;) {
      size_t e = v.find(':', b);
      std::string part = v.substr(b, e == std::string::npos ? e : e - b);
      if (!isInteger(part)) {
        error = "table '" + p.name + "' needs ':'-separated integers, got '" +
                v + "'";
        return false;
      }
      if (e == std::string::npos)
        return true;
      b = e + 1;
    }
  }
  default:
    if (isInteger(v))
      return true;
    error = "'" + p.name + "' (" + paramKindName(p.kind) +
            ") needs an integer, got '" + v + "'";
    return false;
  }
}
} // namespace

bool bindParams(Collective &c, const BindOptions &opts, std::string &error) {
  auto bindKind = [&](ParamKind k, const std::string &v) {
    for (Param &p : c.params)
      if (p.kind == k) {
        if (!checkValue(p, v, error))
          return false;
        p.bound = v;
      }
    return true;
  };
  if ((opts.ranks && !bindKind(ParamKind::Ranks, std::to_string(*opts.ranks))) ||
      (opts.count && !bindKind(ParamKind::Count, std::to_string(*opts.count))) ||
      (opts.root && !bindKind(ParamKind::Root, std::to_string(*opts.root))) ||
      (!opts.dtype.empty() && !bindKind(ParamKind::Type, opts.dtype)) ||
      (!opts.op.empty() && !bindKind(ParamKind::Op, opts.op)))
    return false;
  for (const std::string &d : opts.defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      error = "expected NAME=VALUE after -D, got '" + d + "'";
      return false;
    }
    std::string name = d.substr(0, eq), value = d.substr(eq + 1);
    Param *p = nullptr;
    std::string names;
    for (Param &q : c.params) {
      if (q.name == name)
        p = &q;
      names += (names.empty() ? "" : ", ") + q.name;
    }
    if (!p) {
      error = "collective '" + c.name + "' has no parameter '" + name +
              "' (its parameters: " + names + ")";
      return false;
    }
    if (!checkValue(*p, value, error))
      return false;
    p->bound = value;
  }
  return true;
}

bool verifySource(const Source &src, const Collective &c,
                  llvm::raw_ostream &errs) {
  std::vector<Diag> errors, warnings;
  bool ok = verifyCollective(c, errors, warnings);
  for (const Diag &d : warnings)
    printDiag(errs, src, d, "warning");
  for (const Diag &d : errors)
    printDiag(errs, src, d, "error");
  return ok && errors.empty();
}

std::optional<EmitKind> parseEmitKind(llvm::StringRef name) {
  if (name == "layout")
    return EmitKind::Layout;
  if (name == "desc")
    return EmitKind::Desc;
  if (name == "snac")
    return EmitKind::Snac;
  if (name == "plan")
    return EmitKind::Plan;
  if (name == "atom")
    return EmitKind::Atom;
  if (name == "cuda")
    return EmitKind::Cuda;
  return std::nullopt;
}

std::string emitKindNames() { return "layout, desc, snac, plan, atom, cuda"; }

bool inferAndCheck(const Collective &c, llvm::StringRef filename,
                   const EmitOptions &opts, std::vector<Plan> *plans,
                   std::string *snacText, std::string &error) {
  mlir::MLIRContext ctx;
  ctx.getOrLoadDialect<layout::LayoutDialect>();
  ctx.getOrLoadDialect<snac::SnacDialect>();
  std::string diagText;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    llvm::raw_string_ostream ds(diagText);
    ds << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  mlir::OpBuilder b(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  layout::importCollective(b, c, filename);
  mlir::PassManager pm(&ctx);
  SnacInferOptions io;
  io.strategy = opts.strategy;
  io.lanes = opts.lanes;
  io.chunks = opts.chunks;
  io.smallBytes = opts.smallBytes;
  pm.addPass(createSnacInfer(io));
  SnacCheckOptions co;
  co.maxRanks = opts.checkRanks;
  pm.addPass(createSnacCheck(co));
  if (mlir::failed(pm.run(*module))) {
    error = "SNAC inference or checking failed for '" + c.name + "':\n" + diagText;
    return false;
  }
  if (snacText) {
    llvm::raw_string_ostream os(*snacText);
    module->print(os);
  }
  if (plans) {
    plans->clear();
    for (auto prog : module->getOps<snac::ProgramOp>()) {
      Plan p;
      llvm::SmallVector<mlir::Operation *> steps;
      if (mlir::failed(snac::exportPlan(prog, p, steps))) {
        error = diagText;
        return false;
      }
      plans->push_back(p);
    }
  }
  return true;
}

bool compileToDir(const Collective &c, llvm::StringRef filename,
                  const EmitOptions &opts, const std::string &dir,
                  std::string &error) {
  std::vector<Plan> plans;
  if (!inferAndCheck(c, filename, opts, &plans, nullptr, error))
    return false;
  std::string src, hdr;
  if (!emitCode(c, plans, opts.target, src, hdr, error))
    return false;
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "cannot create '" + dir + "': " + ec.message();
    return false;
  }
  std::string ext = opts.target == "host" ? "cpp" : "cu";
  std::string base = dir + "/" + c.name + ".purlin.";
  std::ofstream(base + ext) << src;
  std::ofstream(base + "h") << hdr;
  // The registry: every collective whose header lies in `dir`.
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef f = llvm::sys::path::filename(it->path());
    if (f.ends_with(".purlin.h"))
      names.push_back(f.drop_back(strlen(".purlin.h")).str());
  }
  std::sort(names.begin(), names.end());
  std::ofstream reg(dir + "/registry.cpp");
  reg << "// registry.cpp -- generated by purlinc: every collective in this folder.\n";
  for (auto &n : names)
    reg << "#include \"" << n << ".purlin.h\"\n";
  reg << "extern \"C\" const purlin_collective_info *(*const purlin_registry[])(void) = {\n";
  for (auto &n : names)
    reg << "    purlin_collective_" << n << ",\n";
  if (names.empty())
    reg << "    nullptr,\n";
  reg << "};\nextern \"C\" const int purlin_registry_size = " << names.size() << ";\n";
  if (!reg) {
    error = "cannot write '" + dir + "/registry.cpp'";
    return false;
  }
  return true;
}

bool emitLayout(const Collective &c, llvm::StringRef filename,
                bool printLocations, llvm::raw_ostream &os,
                std::string &error) {
  mlir::MLIRContext ctx;
  ctx.getOrLoadDialect<layout::LayoutDialect>();
  // Verification problems were reported on the source already; keep the
  // context's own diagnostics for what would be a bug here.
  mlir::OpBuilder b(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  layout::importCollective(b, c, filename);
  if (mlir::failed(mlir::verify(*module))) {
    error = "the layout dialect of '" + c.name + "' does not verify";
    return false;
  }
  mlir::OpPrintingFlags flags;
  if (printLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(os, flags);
  return true;
}

bool emit(const Source &src, const Collective &c, const EmitOptions &opts,
          llvm::raw_ostream &os, std::string &error) {
  switch (opts.kind) {
  case EmitKind::Layout:
    return emitLayout(c, src.path, opts.printLocations, os, error);
  case EmitKind::Desc:
    os << writeDesc(c);
    return true;
  case EmitKind::Snac: {
    std::string text;
    if (!inferAndCheck(c, src.path, opts, nullptr, &text, error))
      return false;
    os << text;
    return true;
  }
  case EmitKind::Plan:
  case EmitKind::Atom:
  case EmitKind::Cuda: {
    if (opts.kind == EmitKind::Cuda && opts.target == "host") {
      error = "--emit=cuda needs a GPU target (--target=sm_80, sm_90 or sm_100)";
      return false;
    }
    std::vector<Plan> plans;
    if (!inferAndCheck(c, src.path, opts, &plans, nullptr, error))
      return false;
    if (opts.kind == EmitKind::Plan) {
      for (auto &p : plans)
        os << writePlan(p) << "  inplace_safe " << (p.inplaceSafe ? 1 : 0)
           << " inplace_same " << (p.inplaceSame ? 1 : 0)
           << " band [" << p.minBytes << ", " << p.maxBytes << ")\n";
      return true;
    }
    std::string code, header;
    if (!emitCode(c, plans, opts.target, code, header, error))
      return false;
    os << code;
    return true;
  }
  }
  error = "unhandled emit kind";
  return false;
}

} // namespace purlin
