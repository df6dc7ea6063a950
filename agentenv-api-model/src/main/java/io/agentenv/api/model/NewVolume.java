package io.agentenv.api.model;

/**
 * E2B schema {@code NewVolume}: the name of the volume to create. {@code sizeMiB} is this server's own optional field:
 * the volume's size in MiB (the operator's default when absent; above the operator's maximum is a 400).
 */
public record NewVolume(String name, Integer sizeMiB) {}
