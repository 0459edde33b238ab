#!/usr/bin/env node
// The `allocrun` command. The package ships TypeScript sources, so register tsx's loader in this process
// (not a child: signals such as Ctrl-C must reach the CLI directly) and hand over to src/cli/main.ts.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
