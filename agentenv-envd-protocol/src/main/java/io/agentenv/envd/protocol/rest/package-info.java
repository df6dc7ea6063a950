/**
 * envd's REST payloads ({@code POST /init}, {@code GET /metrics}, {@code GET /logs}, the {@code POST /files} answer and
 * the error body), as the E2B SDK and the host see them on the wire. One record per JSON object: the component order
 * is the field order, {@code @JsonProperty} gives the wire name where it is not the component's, and a null component
 * is left out ({@code @JsonInclude(NON_NULL)}).
 *
 * <p>envd writes them with its own serialiser (gson, see {@code io.agentenv.envd.http.RestJson}); the host reads and
 * writes them with Jackson. jackson-annotations is the only dependency: its annotations are inert where Jackson is not
 * used (envd's jar does not even ship them). The round-trip tests in agentenv-envd-client pin that both produce the
 * same bytes.
 */
package io.agentenv.envd.protocol.rest;
