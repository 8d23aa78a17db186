/**
 * Declarations for the npm package. The client's types come from the router, whose type reaches
 * into the server (its context holds the database). Here the TypeScript compiler resolves every
 * type of `api_types.ts` and writes it out in full, so the package's `.d.ts` files stand alone.
 */
import ts from "typescript";

/** The client's source files whose declarations ship, by name without `.ts`. */
const CLIENT_FILES = ["mod", "client", "error", "api_types"];
const FLATTENED = "api_types";

const NODE_FLAGS = ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.InTypeAlias |
  ts.NodeBuilderFlags.MultilineObjectLiterals;

export interface DeclarationsInput {
  /** A copy of the workspace (deno.json, shared/, server/, client/) with node_modules installed. */
  workspace: string;
  /** Deno's own declarations (`deno types`), for the server's use of `Deno`. */
  denoTypes: string;
}

function compilerOptions(workspace: string): ts.CompilerOptions {
  return {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
    strict: true,
    skipLibCheck: true,
    types: [],
    lib: ["lib.esnext.d.ts"],
    paths: {
      "@probe/shared": ["./shared/mod.ts"],
      "@probe/server/router": ["./server/procedures/router.ts"],
    },
    pathsBasePath: workspace,
    declaration: true,
    emitDeclarationOnly: true,
    removeComments: false,
  };
}

function failOn(diagnostics: readonly ts.Diagnostic[], what: string): void {
  if (diagnostics.length === 0) return;
  const text = ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => "/",
    getNewLine: () => "\n",
  });
  throw new Error(`${what}:\n${text}`);
}

const isExported = (node: ts.Node) =>
  ts.canHaveModifiers(node) &&
  (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);

function leadingJsDoc(source: ts.SourceFile, node: ts.Node): string {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  return ranges
    .map((r) => source.text.slice(r.pos, r.end))
    .filter((c) => c.startsWith("/**"))
    .map((c) => `${c}\n`)
    .join("");
}

/**
 * An object type with both properties and an index signature (zod's `.catchall`) cannot be
 * written as one literal when an optional property's `undefined` breaks the index signature, so
 * such literals are written as the intersection of their properties and their index signatures.
 */
function splitIndexSignatures(node: ts.TypeNode): ts.TypeNode {
  const visit = (n: ts.Node): ts.Node => {
    const visited = ts.visitEachChild(n, visit, undefined);
    if (!ts.isTypeLiteralNode(visited)) return visited;
    const index = visited.members.filter(ts.isIndexSignatureDeclaration);
    const rest = visited.members.filter((m) => !ts.isIndexSignatureDeclaration(m));
    if (index.length === 0 || rest.length === 0) return visited;
    return ts.factory.createIntersectionTypeNode([
      ts.factory.createTypeLiteralNode(rest),
      ts.factory.createTypeLiteralNode(index),
    ]);
  };
  return visit(node) as ts.TypeNode;
}

/** Every exported alias of `api_types.ts`, written out as the structural type it stands for. */
function flattenTypes(program: ts.Program, file: ts.SourceFile): string {
  const checker = program.getTypeChecker();
  const printer = ts.createPrinter({ removeComments: true });
  const out = [
    "/**\n * The input and output of every operation of the probe service. Written by\n" +
    " * `deno task build:client` from the service's router; do not edit.\n *\n * @module\n */\n",
  ];
  for (const statement of file.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || !isExported(statement)) continue;
    const type = checker.getTypeAtLocation(statement.name);
    const node = checker.typeToTypeNode(type, undefined, NODE_FLAGS);
    if (!node) throw new Error(`Cannot write out the type ${statement.name.text}`);
    const text = printer.printNode(ts.EmitHint.Unspecified, splitIndexSignatures(node), file);
    out.push(`${leadingJsDoc(file, statement)}export type ${statement.name.text} = ${text};\n`);
  }
  return out.join("\n");
}

/** Relative imports of `.ts` files become imports of the `.js` files the package ships. */
function toPackageSpecifiers(text: string): string {
  return text.replace(/(from\s+["']\.\/[\w./-]+)\.ts(["'])/g, "$1.js$2");
}

/**
 * Builds the package's declarations: `{ "mod.d.ts": text, ... }`. Throws when the client's
 * sources have type errors, when a written-out type differs from the router's, or when the
 * result needs anything beyond itself.
 */
export function buildDeclarations({ workspace, denoTypes }: DeclarationsInput) {
  const options = compilerOptions(workspace);
  const clientPath = (name: string) => `${workspace}/client/${name}.ts`;
  const program = ts.createProgram([clientPath("mod"), denoTypes], options);
  const clientSources = CLIENT_FILES.map((name) => {
    const source = program.getSourceFile(clientPath(name));
    if (!source) throw new Error(`client/${name}.ts is not part of the client's module graph`);
    return source;
  });
  failOn(
    clientSources.flatMap((s) => [
      ...program.getSyntacticDiagnostics(s),
      ...program.getSemanticDiagnostics(s),
    ]),
    "The client does not type-check",
  );

  const files: Record<string, string> = {};
  for (const [index, name] of CLIENT_FILES.entries()) {
    if (name === FLATTENED) {
      files[`${name}.d.ts`] = flattenTypes(program, clientSources[index]);
      continue;
    }
    const result = program.emit(
      clientSources[index],
      (fileName, text) => {
        if (fileName.endsWith(`/${name}.d.ts`)) files[`${name}.d.ts`] = toPackageSpecifiers(text);
      },
      undefined,
      true,
    );
    failOn(result.diagnostics, `Declarations of client/${name}.ts`);
  }
  checkAgainstRouter(workspace, options, denoTypes, files[`${FLATTENED}.d.ts`]);
  return files;
}

/** The written-out types must be the router's types, both ways assignable, one by one. */
function checkAgainstRouter(
  workspace: string,
  options: ts.CompilerOptions,
  denoTypes: string,
  flattened: string,
): void {
  const flatPath = `${workspace}/client/_flat_api_types.ts`;
  const checkPath = `${workspace}/client/_flat_check.ts`;
  const names = [...flattened.matchAll(/^export type (\w+) =/gm)].map((m) => m[1]);
  const check = [
    `import type * as Flat from "./_flat_api_types.ts";`,
    `import type * as Router from "./api_types.ts";`,
    "type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;",
    ...names.map((n) => `export const _${n}: Same<Flat.${n}, Router.${n}> = true;`),
  ].join("\n");
  const host = ts.createCompilerHost(options);
  const virtual: Record<string, string> = { [flatPath]: flattened, [checkPath]: check };
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.readFile = (f) => virtual[f] ?? readFile(f);
  host.fileExists = (f) => f in virtual || fileExists(f);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (f, lang, ...rest) =>
    f in virtual ? ts.createSourceFile(f, virtual[f], lang) : getSourceFile(f, lang, ...rest);
  const program = ts.createProgram([checkPath, denoTypes], { ...options, noEmit: true }, host);
  const source = program.getSourceFile(checkPath)!;
  failOn(
    [
      ...program.getSemanticDiagnostics(source),
      ...program.getSemanticDiagnostics(
        program.getSourceFile(flatPath)!,
      ),
    ],
    "The written-out types differ from the router's",
  );
}

/**
 * The package's declarations alone, with nothing installed beside them, must type-check and
 * import only each other. `dir` holds them and the package.json.
 */
export function checkStandalone(dir: string): void {
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".d.ts"));
  for (const name of names) {
    const text = Deno.readTextFileSync(`${dir}/${name}`);
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!fileName.startsWith("./")) throw new Error(`${name} imports ${fileName}`);
    }
  }
  const program = ts.createProgram(names.map((n) => `${dir}/${n}`), {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2022.d.ts", "lib.dom.d.ts"],
    types: [],
    typeRoots: [],
  });
  failOn(ts.getPreEmitDiagnostics(program), "The package's declarations do not stand alone");
}
