package io.agentenv.envd.protocol.rest;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * envd's error answer on its REST routes ({@code /init}, {@code /files}, {@code /logs}, ...):
 * {@code {"code":<HTTP status>,"message":"..."}}. (Connect RPC errors have a string {@code code} instead: see
 * {@code connect.RpcException}.)
 */
public record ErrorBody(
        @JsonProperty("code") int code,
        @JsonProperty("message") String message) {}
