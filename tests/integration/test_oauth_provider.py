"""Self-test of the OAuth fixture (oauth_support.py, tests/oauth/provider.mjs), not of imgmcp: the
tokens it hands the resource-server tests are what they claim to be. One provider serves the
whole class; only test_rotate_keys changes it, and it asserts relative to its own rotation.
"""
import json
import subprocess
import time
import unittest

from oauth_support import OAUTH_DIR, OAuthProvider, decode_jwt_unverified

RESOURCE = "http://127.0.0.1:1/mcp"

# Reads {"jwks", "tokens", "issuer"} on stdin, prints one result per token: "ok" or the error.
VERIFY_SCRIPT = """
import { createLocalJWKSet, jwtVerify } from 'jose';
let input = '';
for await (const chunk of process.stdin) input += chunk;
const { jwks, tokens, issuer } = JSON.parse(input);
const keys = createLocalJWKSet(jwks);
const results = [];
for (const token of tokens) {
  try {
    const algorithms = ['RS256', 'ES256', 'EdDSA'];
    await jwtVerify(token, keys, { issuer, typ: 'at+jwt', algorithms });
    results.push('ok');
  } catch (err) {
    results.push(`${err.code}: ${err.message}`);
  }
}
process.stdout.write(JSON.stringify(results));
"""


def verify_with_jose(jwks, tokens, issuer):
    """jose's verdict on each token ("ok" or its error), run by node in tests/oauth."""
    done = subprocess.run(["node", "--input-type=module", "-e", VERIFY_SCRIPT], cwd=OAUTH_DIR,
                          input=json.dumps({"jwks": jwks, "tokens": tokens, "issuer": issuer}),
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise AssertionError(f"jose verification script failed: {done.stderr}")
    return json.loads(done.stdout)


class OAuthProviderTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.provider = OAuthProvider()
        cls.addClassCleanup(cls.provider.close)

    def assert_access_token(self, token, alg, sub, client_id, scope):
        header, claims = decode_jwt_unverified(token)
        self.assertEqual(header["alg"], alg)
        self.assertEqual(header["typ"], "at+jwt")
        self.assertIn(header["kid"], {k["kid"] for k in self.provider.jwks()["keys"]})
        self.assertEqual(claims["iss"], self.provider.issuer)
        self.assertEqual(claims["aud"], RESOURCE)
        self.assertEqual(claims["scope"], scope)
        self.assertEqual(claims["sub"], sub)
        self.assertEqual(claims["client_id"], client_id)
        self.assertGreater(claims["exp"], time.time())
        return header, claims

    def test_discovery(self):
        meta = self.provider.metadata
        self.assertEqual(meta["issuer"], self.provider.issuer)
        for key in ("jwks_uri", "token_endpoint", "authorization_endpoint",
                    "introspection_endpoint"):
            self.assertTrue(meta[key].startswith(self.provider.issuer + "/"), key)
        rfc8414 = self.provider._json("GET", "/.well-known/oauth-authorization-server")
        self.assertEqual(rfc8414["jwks_uri"], meta["jwks_uri"])
        jwks = self.provider.jwks()
        self.assertEqual(sorted(k["kty"] for k in jwks["keys"]), ["EC", "OKP", "RSA"])
        for key in jwks["keys"]:
            self.assertNotIn("d", key)
        self.assertEqual(self.provider._json("GET", "/__test/keys"), jwks)

    def test_client_credentials_tokens(self):
        cases = [("writer", "RS256", "imgmcp:read imgmcp:write"),
                 ("reader", "RS256", "imgmcp:read"),
                 ("writer-es256", "ES256", "imgmcp:read imgmcp:write"),
                 ("writer-eddsa", "EdDSA", "imgmcp:read imgmcp:write")]
        for client, alg, scope in cases:
            with self.subTest(client=client):
                token = self.provider.client_credentials_token(client, RESOURCE)
                self.assert_access_token(token, alg, client, client, scope)

    def test_reader_cannot_get_write_scope(self):
        with self.assertRaisesRegex(AssertionError, "invalid_scope"):
            self.provider.client_credentials_token("reader", RESOURCE,
                                                   "imgmcp:read imgmcp:write")

    def test_foreign_resource_is_refused(self):
        with self.assertRaisesRegex(AssertionError, "invalid_target"):
            self.provider.client_credentials_token("writer", "https://example.com/mcp")

    def test_authorization_code_flow(self):
        response = self.provider.authorization_code_response(RESOURCE, login="alice")
        self.assertEqual(response["token_type"], "Bearer")
        self.assertIn("id_token", response)
        self.assert_access_token(response["access_token"], "RS256", "alice", "app",
                                 "imgmcp:read imgmcp:write")

    def test_rotate_keys(self):
        before = self.provider.client_credentials_token("writer", RESOURCE)
        old_kid = decode_jwt_unverified(before)[0]["kid"]
        new_kid = self.provider.rotate_keys()
        self.assertNotEqual(new_kid, old_kid)
        after = self.provider.client_credentials_token("writer", RESOURCE)
        self.assertEqual(decode_jwt_unverified(after)[0]["kid"], new_kid)
        kids = [k["kid"] for k in self.provider.jwks()["keys"]]
        self.assertIn(old_kid, kids)
        self.assertEqual(kids[0], new_kid)
        signed = self.provider.sign(self.provider.token_claims(RESOURCE))
        self.assertEqual(decode_jwt_unverified(signed)[0]["kid"], new_kid)

    def test_sign(self):
        claims = self.provider.token_claims(RESOURCE, sub="mallory", jti=None)
        self.assertNotIn("jti", claims)
        for alg in ("RS256", "ES256", "EdDSA"):
            with self.subTest(alg=alg):
                header, got = decode_jwt_unverified(self.provider.sign(claims, alg=alg))
                self.assertEqual(header["alg"], alg)
                self.assertEqual(header["typ"], "at+jwt")
                self.assertEqual(got, claims)
        token = self.provider.sign(claims, header={"typ": "JWT", "kid": "nope"})
        self.assertEqual(decode_jwt_unverified(token)[0],
                         {"alg": "RS256", "typ": "JWT", "kid": "nope"})
        unsigned = self.provider.sign(claims, header={"alg": "none"})
        self.assertTrue(unsigned.endswith("."))
        self.assertEqual(len(unsigned.split(".")), 3)
        header, got = decode_jwt_unverified(unsigned)
        self.assertEqual(header["alg"], "none")
        self.assertEqual(got, claims)

    def test_signatures_verify_against_jwks(self):
        """Issued and sign()ed tokens verify with jose (oidc-provider's own JOSE library) against
        the published JWKS; a token signed by one key but naming another kid does not."""
        claims = self.provider.token_claims(RESOURCE)
        tokens = [self.provider.client_credentials_token(client, RESOURCE)
                  for client in ("writer", "writer-es256", "writer-eddsa")]
        tokens += [self.provider.sign(claims, alg=alg) for alg in ("RS256", "ES256", "EdDSA")]
        rsa_kid = next(k["kid"] for k in self.provider.jwks()["keys"] if k["kty"] == "RSA")
        forged = self.provider.sign(claims, alg="ES256", header={"alg": "RS256", "kid": rsa_kid})
        results = verify_with_jose(self.provider.jwks(), tokens + [forged], self.provider.issuer)
        self.assertEqual(results, ["ok"] * len(tokens) + [results[-1]])
        self.assertNotEqual(results[-1], "ok")

    def test_opaque_token_introspection(self):
        token = self.provider.client_credentials_token("opaque", RESOURCE)
        self.assertNotIn(".", token)
        info = self.provider.introspect(token)
        self.assertIs(info["active"], True)
        self.assertEqual(info["aud"], RESOURCE)
        self.assertEqual(info["scope"], "imgmcp:read imgmcp:write")
        self.assertEqual(info["client_id"], "opaque")
        self.assertEqual(info["sub"], "opaque")
        self.assertGreater(info["exp"], time.time())
        self.assertIs(self.provider.introspect(token + "x")["active"], False)


if __name__ == "__main__":
    unittest.main()
