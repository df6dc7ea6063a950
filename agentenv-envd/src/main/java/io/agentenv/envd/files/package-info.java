/**
 * envd's {@code GET} and {@code POST /files}, wire-compatible with E2B's envd.
 *
 * <p>Downloads send the raw bytes of a regular file, gzip-encoded when {@code Accept-Encoding} allows it, with
 * single-range {@code Range} and {@code If-Modified-Since} answered on the identity coding. Uploads take
 * multipart/form-data (parts named {@code file}; without a {@code path} query each part's file name is its full
 * target path, so several files go up in one request) or application/octet-stream, either optionally
 * {@code Content-Encoding: gzip}; both stream to disk. {@code X-Metadata-<key>} headers replace the files' metadata.
 * Errors are JSON {@code {"code":<int>,"message":...}}: 400 bad input or a directory, 401 bad user or signature, 404
 * missing file, 406 no acceptable encoding, 507 disk full.
 *
 * <p>Once {@code POST /init} has set an access token, a request needs the token in {@code X-Access-Token} or a v1
 * signature ({@code signature}, optional {@code signature_expiration}) for exactly its path, operation and username;
 * an expired one gets {@code 401 {"code":401,"message":"signature is already expired"}}.
 */
package io.agentenv.envd.files;
