import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Much of the suite waits on I/O (sandbox HTTP with latency, radosgw, outages and grace periods
    // the tests wait out, child CLI runs): more test files at once than cores (vitest's default is
    // cores - 1, one file at a time on 2 cores). With 3 the clean-clone CI on 2 cores left them
    // idle ~15% of the time (~1,240 CPU-s in 735 s); 4 keeps both busy, and more would only add
    // contention. `npx vitest run --maxWorkers=<n>` overrides it.
    maxWorkers: 4,
    // A worker imports the sources once for all the files it runs, not once per file (with
    // isolation the imports took ~200 of the suite's ~1,800 test-seconds). The price: a test file
    // that changes process-wide state (process.env, cwd, spies) puts it back in afterAll
    // (e.g. test/helpers/s3.ts useS3CredentialsInEnv).
    isolate: false,
    // One real S3 server (Ceph radosgw) for the whole run; see test/setup/s3.ts. One test build of the CLI: test/setup/test-cli.ts.
    globalSetup: ['test/setup/s3.ts', 'test/setup/test-cli.ts'],
    reporters: ['default'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
