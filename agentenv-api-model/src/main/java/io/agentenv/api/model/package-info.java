/**
 * E2B wire records: the JSON request and response bodies of the control-plane REST API, with the exact field
 * names, casing and optionality of E2B's OpenAPI schemas (see {@code e2b-protocol.md} §5).
 *
 * <p>Request records ignore unknown fields and check what they can at construction (a violation throws
 * {@link java.lang.IllegalArgumentException} with a message that names the field); defaults that differ between
 * API versions (the v1 and v2 create timeouts, for example) are constants here and are applied by the server's API
 * layer. Response records omit absent optional fields, except the ones E2B sends as explicit {@code null}.
 * This module depends on jackson-annotations only.
 */
package io.agentenv.api.model;
