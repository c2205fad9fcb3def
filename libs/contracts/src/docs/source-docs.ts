import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The doc comments of a class: the class's own and each property's. */
export interface ClassDocs {
  doc: string;
  properties: Map<string, string>;
}

/** Doc comments read from the contract sources, so the generated documents say what the code says. */
export interface SourceDocs {
  classes: Map<string, ClassDocs>;
  /** Docs of the properties of exported `const` object literals (SUBJECTS, STREAMS), by `CONST.property`. */
  constants: Map<string, string>;
}

function docOf(node: ts.Node): string {
  return ts
    .getJSDocCommentsAndTags(node)
    .filter(ts.isJSDoc)
    .map((d) => ts.getTextOfJSDocComment(d.comment) ?? '')
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'docs' ? [] : tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Reads every class and constant doc comment under `sourceDir` (libs/contracts/src). */
export function readSourceDocs(sourceDir: string): SourceDocs {
  const classes = new Map<string, ClassDocs>();
  const constants = new Map<string, string>();
  for (const file of tsFiles(sourceDir).sort()) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node): void => {
      if (ts.isClassDeclaration(node) && node.name) {
        const properties = new Map<string, string>();
        for (const member of node.members) {
          if (ts.isPropertyDeclaration(member) && ts.isIdentifier(member.name)) properties.set(member.name.text, docOf(member));
        }
        classes.set(node.name.text, { doc: docOf(node), properties });
      }
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) {
        let init: ts.Expression = node.initializer;
        while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) init = init.expression;
        if (ts.isObjectLiteralExpression(init)) {
          for (const p of init.properties) {
            if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name)) constants.set(`${node.name.text}.${p.name.text}`, docOf(p));
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return { classes, constants };
}
