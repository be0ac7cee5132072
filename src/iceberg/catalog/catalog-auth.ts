/**
 * How catalog requests are authenticated: none, a bearer token, OAuth2 client credentials (a token
 * from the token endpoint, fetched again before it expires and after a 401), or AWS SigV4 (AWS
 * Glue and S3 Tables: each request signed with the credentials of the AWS chain). Secrets stay in
 * this module: no message, log line or error carries them.
 */
import { createHash, createHmac } from 'node:crypto';
import { request } from 'undici';
import { SignatureV4 } from '@smithy/signature-v4';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { CatalogAuthError, CatalogRequestError } from './catalog-errors.js';

/** AWS credentials, or a function giving them (default: the AWS chain: env, profile, SSO, container, instance). */
export type AwsCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string | undefined };
export type AwsCredentialsSource = AwsCredentials | (() => Promise<AwsCredentials>);

export type CatalogAuthSettings =
  | { kind: 'none' }
  | { kind: 'bearer'; token: string }
  | { kind: 'oauth2'; clientId: string; clientSecret: string; tokenUrl: string; scope?: string | undefined }
  | { kind: 'sigv4'; region: string; signingName: string; credentials?: AwsCredentialsSource | undefined };

/** A request about to be sent, as the signer sees it. */
export interface OutgoingRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

/** Bytes as SignatureV4 hands them over (a string, a typed array or view, an ArrayBuffer). */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: SourceData) =>
  typeof d === 'string' ? d : d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);

/** Node's SHA-256 (and HMAC-SHA-256 with a secret) in the shape SignatureV4 takes. */
class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

/** Seconds before a token's expiry at which it is fetched again. */
const EXPIRY_MARGIN_S = 30;

export class CatalogAuthenticator {
  private token: { value: string; expiresAt: number } | undefined;
  private readonly signer: SignatureV4 | undefined;

  constructor(private readonly settings: CatalogAuthSettings) {
    if (settings.kind === 'sigv4') {
      this.signer = new SignatureV4({
        service: settings.signingName,
        region: settings.region,
        credentials: settings.credentials ?? defaultProvider(),
        sha256: NodeSha256,
      });
    }
  }

  /** Adds what authenticates `req` (an Authorization header, or SigV4's signed headers). */
  async authenticate(req: OutgoingRequest): Promise<void> {
    const s = this.settings;
    if (s.kind === 'bearer') req.headers.authorization = `Bearer ${s.token}`;
    if (s.kind === 'oauth2') req.headers.authorization = `Bearer ${await this.oauthToken()}`;
    if (this.signer) await this.sign(req);
  }

  /** After a 401: forget the token so the next request fetches a new one; false when nothing can be refreshed. */
  invalidate(): boolean {
    if (this.settings.kind !== 'oauth2') return false;
    this.token = undefined;
    return true;
  }

  private async sign(req: OutgoingRequest): Promise<void> {
    const query: Record<string, string> = {};
    for (const [k, v] of req.url.searchParams) query[k] = v;
    const signed = await this.signer!.sign({
      method: req.method,
      protocol: req.url.protocol,
      hostname: req.url.hostname,
      port: req.url.port === '' ? undefined : Number(req.url.port),
      path: req.url.pathname,
      query,
      headers: { ...req.headers, host: req.url.host },
      body: req.body,
    });
    Object.assign(req.headers, signed.headers);
    delete req.headers.host;
  }

  private async oauthToken(): Promise<string> {
    const now = Date.now();
    if (this.token && this.token.expiresAt > now) return this.token.value;
    const s = this.settings as Extract<CatalogAuthSettings, { kind: 'oauth2' }>;
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: s.clientId, client_secret: s.clientSecret });
    if (s.scope) form.set('scope', s.scope);
    let answer;
    try {
      answer = await request(s.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
    } catch (err) {
      throw new CatalogRequestError(undefined, s.tokenUrl, `the token endpoint did not answer: ${(err as Error).message}`, err);
    }
    const body = (await answer.body.json().catch(() => ({}))) as {
      access_token?: string;
      expires_in?: number;
      error?: string;
      error_description?: string;
    };
    if (answer.statusCode === 400 || answer.statusCode === 401 || answer.statusCode === 403) {
      throw new CatalogAuthError(s.tokenUrl, answer.statusCode, `${body.error ?? 'refused'}: ${body.error_description ?? ''}`);
    }
    if (answer.statusCode !== 200 || typeof body.access_token !== 'string') {
      throw new CatalogRequestError(answer.statusCode, s.tokenUrl, 'the token endpoint gave no access_token');
    }
    const lifetime = Math.max(0, (body.expires_in ?? 3600) - EXPIRY_MARGIN_S);
    this.token = { value: body.access_token, expiresAt: now + lifetime * 1000 };
    return body.access_token;
  }
}
