// npm postpack: the shrinkwrap exists only inside the tarball; the repository keeps package-lock.json.
import { rmSync } from 'node:fs';

rmSync(new URL('../../npm-shrinkwrap.json', import.meta.url), { force: true });
