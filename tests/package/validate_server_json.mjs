// Validates a server.json against the registry's schema kept in registry/ (draft-07, Ajv).
// Usage: node validate_server_json.mjs FILE. Exit 0 when valid; otherwise each error on stderr
// (its JSON pointer and message) and exit 1.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const here = dirname(fileURLToPath(import.meta.url));
const schema = JSON.parse(readFileSync(join(here, "registry", "server.schema.json"), "utf8"));
const entry = JSON.parse(readFileSync(process.argv[2], "utf8"));

const ajv = new Ajv({ allErrors: true });
ajv.addKeyword("example");  // an annotation in the registry's schema, not a check
addFormats(ajv);
const validate = ajv.compile(schema);
if (validate(entry)) {
  console.log("valid against", schema.$id);
} else {
  for (const error of validate.errors) {
    console.error(`${error.instancePath || "/"}: ${error.message}`);
  }
  process.exit(1);
}
