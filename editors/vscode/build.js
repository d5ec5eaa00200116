// Bundles the extension into dist/extension.js (esbuild; `vscode` stays external) and
// copies the codicon font the chat webview uses into dist/codicons. `npm run compile`
// type-checks and emits out/ for the unit tests.
'use strict';
const esbuild = require('esbuild');
const fs = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'codicons'), { recursive: true });
for (const f of ['codicon.css', 'codicon.ttf']) {
  fs.copyFileSync(path.join(__dirname, 'node_modules', '@vscode', 'codicons', 'dist', f), path.join(dist, 'codicons', f));
}
esbuild
  .build({
    entryPoints: [path.join(__dirname, 'src', 'extension.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    outfile: path.join(dist, 'extension.js'),
    sourcemap: false,
    minify: process.argv.includes('--minify'),
    logLevel: 'warning',
  })
  .catch(() => process.exit(1));
