/**
 * Certificates for the benchmark's TLS target, made with `openssl` in a temporary folder: a CA of
 * the run's own and a leaf for `localhost` signed by it, EC P-256 keys as the tests' material in
 * server/runner/kinds/testdata. Those leaves are for `probe.test`, a name a runner process cannot
 * resolve (it asks the system); `localhost` resolves to 127.0.0.1, and the runner trusts the CA
 * through `DENO_CERT`.
 */

export interface TlsMaterial {
  /** The CA's certificate (for `DENO_CERT`). */
  ca: string;
  /** The leaf's certificate and key, for the server. */
  cert: string;
  key: string;
  remove(): Promise<void>;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("openssl", { args, cwd: dir, stdin: "null" }).output();
  } catch (error) {
    throw new Error(`openssl is needed for the TLS target (apt-get install -y openssl): ${error}`);
  }
  if (!output.success) {
    throw new Error(`openssl ${args[0]} failed: ${new TextDecoder().decode(output.stderr)}`);
  }
}

/** A CA and a `localhost` leaf it signed, valid for two days. */
export async function makeTlsMaterial(): Promise<TlsMaterial> {
  const dir = await Deno.makeTempDir({ prefix: "bench-tls-" });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  await openssl(dir, [
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=probe-service bench CA",
  ]);
  await openssl(
    dir,
    ["req", "-new", ...ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj"]
      .concat("/CN=localhost"),
  );
  await Deno.writeTextFile(
    `${dir}/leaf.ext`,
    "subjectAltName=DNS:localhost\nbasicConstraints=critical,CA:FALSE\n" +
      "extendedKeyUsage=serverAuth\n",
  );
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    "leaf.ext",
    "-out",
    "leaf.pem",
  ]);
  return {
    ca: `${dir}/ca.pem`,
    cert: `${dir}/leaf.pem`,
    key: `${dir}/leaf.key`,
    remove: () => Deno.remove(dir, { recursive: true }),
  };
}
