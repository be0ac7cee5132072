/**
 * The catalog's authentication: a static bearer token and OAuth2 client credentials through
 * `POST /v1/oauth/tokens` (the spec's getToken, open-api/rest-catalog-open-api.yaml of apache/iceberg
 * at 7f879b11366e17a676a03f15247a821751415529: form-encoded OAuthClientCredentialsRequest,
 * OAuthTokenResponse, OAuthError), tokens that expire, and the expired-token knob.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { CatalogOptions } from './catalog-options.js';

export type TokenAnswer = { status: number; body: Record<string, unknown> };

export class CatalogAuth {
  private readonly issued = new Map<string, number>();
  private expireNext = 0;

  constructor(private readonly opts: CatalogOptions) {}

  set(expireTokens: number | undefined): void {
    if (expireTokens !== undefined) this.expireNext = expireTokens;
  }

  get required(): boolean {
    return this.opts.auth !== undefined;
  }

  /** `POST /v1/oauth/tokens` with the form fields sent (client id and secret in the body or a Basic header). */
  token(form: Record<string, string>, req: IncomingMessage, now: number): TokenAnswer {
    const auth = this.opts.auth;
    const basic = /^Basic (.+)$/i.exec(req.headers.authorization ?? '');
    const [basicId, basicSecret] = basic ? Buffer.from(basic[1]!, 'base64').toString().split(':') : [];
    const clientId = form.client_id ?? basicId;
    const secret = form.client_secret ?? basicSecret;
    if (form.grant_type !== 'client_credentials') {
      return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'only client_credentials is served' } };
    }
    if (!auth?.clientId || clientId !== auth.clientId || secret !== auth.clientSecret) {
      return { status: 401, body: { error: 'invalid_client', error_description: 'unknown client id or wrong secret' } };
    }
    const lifetime = auth.tokenLifetimeSeconds ?? 3600;
    const token = randomBytes(18).toString('base64url');
    this.issued.set(token, now + lifetime * 1000);
    return {
      status: 200,
      body: {
        access_token: token,
        token_type: 'bearer',
        expires_in: Math.ceil(lifetime),
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        ...(form.scope ? { scope: form.scope } : {}),
      },
    };
  }

  /** Null when the request may go on, else why it gets 401. */
  refuse(req: IncomingMessage, now: number): string | null {
    const auth = this.opts.auth;
    if (!auth) return null;
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (!bearer) return 'missing bearer token';
    const expires = this.issued.get(bearer);
    const valid = bearer === auth.token || (expires !== undefined && expires > now);
    if (!valid) return expires === undefined ? 'invalid bearer token' : 'token expired';
    if (this.expireNext > 0) {
      this.expireNext--;
      this.issued.delete(bearer);
      return 'token expired';
    }
    return null;
  }
}
