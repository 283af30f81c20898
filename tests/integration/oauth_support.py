"""A real OAuth 2.1 / OpenID authorization server for the resource-server tests (standard library
only): tests/oauth/provider.mjs, oidc-provider issuing RFC 9068 JWT access tokens for RFC 8707
resource indicators, as a child process.

OAuthProvider starts `node tests/oauth/provider.mjs`, waits (at most START_TIMEOUT s) for its one
stdout line {"issuer": ...} and reads the discovery document. Then:
- client_credentials_token(client, resource, scope): a token from the token endpoint
  (client_secret_basic; clients and their scopes are listed in provider.mjs);
- authorization_code_token(resource, scope, login): the whole authorization-code flow with PKCE
  S256 over HTTP — authorization request, the devInteractions login and consent forms, the code
  taken from the redirect to http://127.0.0.1/callback (never fetched), the code exchange;
- sign(claims, alg, header): a JWT signed with the provider's current key of `alg` (or unsigned
  with header {"alg": "none"}), for tokens the provider would never issue;
- rotate_keys(): a new RS256 signing key (new kid), the old ones still in the JWKS;
- introspect(token), jwks(), and decode_jwt_unverified(token) to look inside a JWT.
close() (also on leaving the `with` block) closes its stdin, which ends it, and kills it if it
lingers. It needs `npm ci` in tests/oauth; without tests/oauth/node_modules the test is skipped
(a failure in CI, tests/support/skips.py).
"""
import base64
import hashlib
import html.parser
import http.cookiejar
import json
import os
import queue
import secrets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from children import close_pipes, end_at_eof  # noqa: E402  (tests/support)
from skips import require, require_tool  # noqa: E402  (tests/support)

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
OAUTH_DIR = os.path.join(REPO_ROOT, "tests", "oauth")
PROVIDER_SCRIPT = os.path.join(OAUTH_DIR, "provider.mjs")
START_TIMEOUT = 30.0
HTTP_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0

RESOURCE_SCOPES = "imgmcp:read imgmcp:write"
# Every client of provider.mjs but the public "app": its secret is its id + "-secret".
CLIENT_SCOPES = {
    "writer": RESOURCE_SCOPES,
    "reader": "imgmcp:read",
    "writer-es256": RESOURCE_SCOPES,
    "writer-eddsa": RESOURCE_SCOPES,
    "opaque": RESOURCE_SCOPES,
    "imgmcp-rs": RESOURCE_SCOPES,
}
APP_CLIENT = "app"
APP_REDIRECT_URI = "http://127.0.0.1/callback"


class OAuthError(AssertionError):
    """The provider answered a request with an error; the message has the status and body."""


def _b64url_decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def decode_jwt_unverified(token):
    """(header, claims) of a compact JWS, as dicts, without checking the signature."""
    parts = token.split(".")
    if len(parts) != 3:
        raise ValueError(f"not a compact JWS (want 3 parts, got {len(parts)}): {token[:40]!r}")
    return json.loads(_b64url_decode(parts[0])), json.loads(_b64url_decode(parts[1]))


def basic_auth(client_id, secret=None):
    """The Authorization header value of client_secret_basic (RFC 6749 §2.3.1: both parts
    form-encoded); the secret defaults to client_id + "-secret"."""
    secret = f"{client_id}-secret" if secret is None else secret
    pair = f"{urllib.parse.quote_plus(client_id)}:{urllib.parse.quote_plus(secret)}"
    return "Basic " + base64.b64encode(pair.encode()).decode()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Leaves every 3xx to the caller (urllib raises it as an HTTPError with its headers)."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


class _FormParser(html.parser.HTMLParser):
    """The forms of a page: [{"action": ..., "method": ..., "fields": {name: value}}]."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self.forms.append({"action": attrs.get("action", ""),
                               "method": (attrs.get("method") or "get").lower(), "fields": {}})
        elif tag == "input" and self.forms and attrs.get("name"):
            self.forms[-1]["fields"][attrs["name"]] = attrs.get("value") or ""


class OAuthProvider:
    """One provider.mjs process; a context manager that stops it on every path."""

    def __init__(self, port=0):
        require(os.path.isdir(os.path.join(OAUTH_DIR, "node_modules", "oidc-provider")),
                "tests/oauth/node_modules is missing: run `npm ci` in tests/oauth "
                "(it installs oidc-provider for the OAuth tests)")
        node = require_tool("node", "nodejs")
        # A provider that has not listened within START_TIMEOUT is stuck (it listens within a
        # second, three on a loaded machine): it is the fixture, not imgmcp, so it is killed and
        # started once more, saying so on stderr.
        for attempt in (1, 2):
            self._spawn(node, port)
            try:
                line = self._lines.get(timeout=START_TIMEOUT)
                break
            except queue.Empty:
                stuck = self.stderr_text()
                self.close()
                if attempt == 2:
                    raise RuntimeError(f"provider.mjs printed no issuer within {START_TIMEOUT} s, "
                                       f"twice; stderr:\n{stuck}")
                print(f"provider.mjs printed no issuer within {START_TIMEOUT} s; starting it "
                      f"again. Its stderr:\n{stuck}", file=sys.stderr)
        try:
            if line is None:
                raise RuntimeError(f"provider.mjs exited before listening (status "
                                   f"{self.proc.wait(STOP_TIMEOUT)}); "
                                   f"stderr:\n{self.stderr_text()}")
            try:
                self.issuer = json.loads(line)["issuer"]
            except (ValueError, KeyError, TypeError):
                raise RuntimeError(f"unexpected first line from provider.mjs: {line!r}; "
                                   f"stderr:\n{self.stderr_text()}")
            self.metadata = self._json("GET", "/.well-known/openid-configuration")
        except BaseException:
            self.close()
            raise

    def _spawn(self, node, port):
        """Starts provider.mjs with a reader thread for each of its output pipes."""
        self.proc = subprocess.Popen([node, PROVIDER_SCRIPT, "--port", str(port)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=OAUTH_DIR)
        self._stderr_chunks = []
        self._lines = lines = queue.Queue()
        proc, chunks = self.proc, self._stderr_chunks

        def read_stdout():
            for line in proc.stdout:
                lines.put(line.decode("utf-8", "replace"))
            lines.put(None)

        def read_stderr():
            for chunk in iter(lambda: proc.stderr.read1(65536), b""):
                chunks.append(chunk)

        self._readers = [threading.Thread(target=read_stdout, daemon=True),
                         threading.Thread(target=read_stderr, daemon=True)]
        for reader in self._readers:
            reader.start()

    # --- process ----------------------------------------------------------------------------
    def stderr_text(self):
        """Everything provider.mjs wrote to stderr so far (oidc-provider's notices, errors)."""
        return b"".join(self._stderr_chunks).decode("utf-8", "replace")

    def close(self):
        """Closes its stdin (which ends it), waits, kills it if it lingers; idempotent."""
        end_at_eof(self.proc, STOP_TIMEOUT)
        for reader in self._readers:
            reader.join(timeout=STOP_TIMEOUT)
        close_pipes(self.proc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # --- HTTP plumbing ----------------------------------------------------------------------
    def _url(self, path_or_url):
        return path_or_url if "://" in path_or_url else self.issuer + path_or_url

    def _request(self, method, url, data=None, headers=None, opener=None):
        """(status, headers, body bytes); any status, never raises for HTTP errors."""
        req = urllib.request.Request(self._url(url), data=data, method=method,
                                     headers=headers or {})
        try:
            with (opener.open if opener else urllib.request.urlopen)(
                    req, timeout=HTTP_TIMEOUT) as res:
                return res.status, res.headers, res.read()
        except urllib.error.HTTPError as e:
            with e:
                return e.code, e.headers, e.read()

    def _json(self, method, url, body=None, form=None, headers=None, ok=(200,)):
        headers = dict(headers or {})
        data = None
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        status, _, payload = self._request(method, url, data, headers)
        if status not in ok:
            raise OAuthError(f"{method} {url}: HTTP {status} {payload[:2000]!r}\n"
                             f"provider stderr:\n{self.stderr_text()[-4000:]}")
        return json.loads(payload)

    # --- tokens -----------------------------------------------------------------------------
    def token_response(self, client="writer", resource=None, scope=None, secret=None):
        """The whole client-credentials token response (dict). scope None asks for everything
        the client may have (CLIENT_SCOPES); "" asks for no scope parameter at all."""
        form = {"grant_type": "client_credentials"}
        if scope is None:
            scope = CLIENT_SCOPES.get(client, "")
        if scope:
            form["scope"] = scope
        if resource is not None:
            form["resource"] = resource
        return self._json("POST", self.metadata["token_endpoint"], form=form,
                          headers={"Authorization": basic_auth(client, secret)})

    def client_credentials_token(self, client="writer", resource=None, scope=None):
        """An access token for `resource` from the client-credentials grant (see token_response)."""
        return self.token_response(client, resource, scope)["access_token"]

    def authorization_code_response(self, resource, scope="openid imgmcp:read imgmcp:write",
                                    login="alice"):
        """The whole token response of the authorization-code flow (client "app", PKCE S256)
        after `login` signs in and consents; `login` becomes the token's sub."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar),
                                             _NoRedirect())
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(
            hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        state = secrets.token_urlsafe(16)
        query = urllib.parse.urlencode({
            "client_id": APP_CLIENT, "response_type": "code", "redirect_uri": APP_REDIRECT_URI,
            "scope": scope, "state": state, "code_challenge": challenge,
            "code_challenge_method": "S256", "resource": resource,
        })
        callback = self._browse(opener, "GET",
                                f"{self.metadata['authorization_endpoint']}?{query}", login)
        params = urllib.parse.parse_qs(urllib.parse.urlsplit(callback).query)
        if "error" in params:
            raise OAuthError(f"authorization failed: {callback}")
        if params.get("state") != [state] or "code" not in params:
            raise OAuthError(f"unexpected redirect to the client: {callback}")
        form = {"grant_type": "authorization_code", "code": params["code"][0],
                "redirect_uri": APP_REDIRECT_URI, "code_verifier": verifier,
                "client_id": APP_CLIENT, "resource": resource}
        return self._json("POST", self.metadata["token_endpoint"], form=form)

    def authorization_code_token(self, resource, scope="openid imgmcp:read imgmcp:write",
                                 login="alice"):
        """The access token (a JWT for `resource`) of the authorization-code flow."""
        return self.authorization_code_response(resource, scope, login)["access_token"]

    def _browse(self, opener, method, url, login, data=None, max_steps=20):
        """Follows redirects and fills the devInteractions forms (login, then consent) until
        the provider redirects to the client; returns that Location (never fetched)."""
        for _ in range(max_steps):
            headers = {}
            if data is not None:
                headers["Content-Type"] = "application/x-www-form-urlencoded"
            status, res_headers, body = self._request(method, url, data, headers, opener)
            url = urllib.parse.urljoin(self._url(url), res_headers.get("Location") or "")
            if status in (301, 302, 303, 307, 308):
                if url.startswith(APP_REDIRECT_URI):
                    return url
                method, data = "GET", None
                continue
            if status != 200:
                raise OAuthError(f"{method} {url}: HTTP {status} {body[:2000]!r}")
            parser = _FormParser()
            parser.feed(body.decode("utf-8", "replace"))
            forms = [f for f in parser.forms if "prompt" in f["fields"]]
            if not forms:
                raise OAuthError(f"no interaction form at {url}: {body[:2000]!r}")
            form = forms[0]
            fields = dict(form["fields"])
            if fields["prompt"] == "login":
                fields.update(login=login, password="any")
            url = urllib.parse.urljoin(url, form["action"])
            method = form["method"].upper()
            data = urllib.parse.urlencode(fields).encode()
        raise OAuthError(f"no redirect to {APP_REDIRECT_URI} after {max_steps} steps")

    def introspect(self, token, client="imgmcp-rs", secret=None):
        """The introspection response (RFC 7662) for `token`, asked as `client`."""
        return self._json("POST", self.metadata["introspection_endpoint"],
                          form={"token": token},
                          headers={"Authorization": basic_auth(client, secret)})

    # --- test-only routes -------------------------------------------------------------------
    def sign(self, claims, alg="RS256", header=None):
        """A compact JWT of `claims` (used as given) signed with the current `alg` key
        (RS256, ES256, EdDSA); header = {alg, kid, typ: "at+jwt"} updated by `header`, and
        header {"alg": "none"} gives an unsigned "h.p." token."""
        body = {"alg": alg, "header": header or {}, "claims": claims}
        return self._json("POST", "/__test/sign", body=body)["token"]

    def token_claims(self, resource, scope=RESOURCE_SCOPES, sub="writer", lifetime=600,
                     **overrides):
        """Claims like those the provider issues (iss, sub, aud, scope, client_id, iat, exp,
        jti), for sign(); `overrides` replace or add claims, a value None drops that claim."""
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": sub, "aud": resource, "scope": scope,
                  "client_id": sub, "iat": now, "exp": now + lifetime,
                  "jti": secrets.token_urlsafe(16)}
        claims.update(overrides)
        return {k: v for k, v in claims.items() if v is not None}

    def rotate_keys(self):
        """Makes a new RSA key (new kid) the RS256 signing key; the old keys stay listed.
        Returns the new kid."""
        return self._json("POST", "/__test/rotate", body={})["kid"]

    def jwks(self):
        """The public JWKS, as served at jwks_uri."""
        return self._json("GET", self.metadata["jwks_uri"])
