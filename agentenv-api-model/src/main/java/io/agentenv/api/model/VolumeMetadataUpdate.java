package io.agentenv.api.model;

/** The body of {@code PATCH /volumecontent/{volumeID}/path}: the owner (guest ids) and mode to set; absent keeps. */
public record VolumeMetadataUpdate(Integer uid, Integer gid, Integer mode) {}
