package io.agentenv.store.sqlite;

import java.util.List;

/**
 * The schema as an ordered list of migrations; {@code PRAGMA user_version} records how many have been applied. Add a
 * migration at the end, never edit an applied one.
 */
final class Schema {
    static final List<List<String>> MIGRATIONS = List.of(
            // 1: sandboxes, their metadata index, the snapshot catalog with aliases, secrets
            List.of(
                    """
                    CREATE TABLE sandbox (
                        id                      TEXT PRIMARY KEY,
                        template                TEXT NOT NULL,
                        alias                   TEXT,
                        state                   TEXT NOT NULL,
                        started_at              INTEGER NOT NULL,
                        timeout_ms              INTEGER NOT NULL,
                        expires_at              INTEGER,
                        on_timeout              TEXT NOT NULL,
                        timeout_pause_mode      TEXT NOT NULL,
                        auto_resume             INTEGER NOT NULL,
                        secure                  INTEGER NOT NULL,
                        cpu_count               INTEGER NOT NULL,
                        memory_mib              INTEGER NOT NULL,
                        disk_size_mib           INTEGER NOT NULL,
                        metadata                TEXT NOT NULL,
                        env_vars                TEXT NOT NULL,
                        network                 TEXT NOT NULL,
                        custom_extension_params TEXT NOT NULL,
                        paused_state            BLOB,
                        paused_artifact_dir     TEXT,
                        version                 INTEGER NOT NULL DEFAULT 0
                    )""",
                    "CREATE INDEX sandbox_by_start ON sandbox (started_at, id)",
                    "CREATE INDEX sandbox_by_expiry ON sandbox (expires_at) WHERE state = 'RUNNING' AND expires_at IS NOT NULL",
                    """
                    CREATE TABLE sandbox_metadata (
                        sandbox_id TEXT NOT NULL REFERENCES sandbox (id) ON DELETE CASCADE,
                        key        TEXT NOT NULL,
                        value      TEXT NOT NULL,
                        PRIMARY KEY (sandbox_id, key)
                    )""",
                    "CREATE INDEX sandbox_metadata_by_pair ON sandbox_metadata (key, value)",
                    """
                    CREATE TABLE snapshot (
                        id              TEXT PRIMARY KEY,
                        source_sandbox  TEXT,
                        source_template TEXT NOT NULL,
                        env_vars        TEXT NOT NULL,
                        cpu_count       INTEGER NOT NULL,
                        memory_mib      INTEGER NOT NULL,
                        disk_size_mib   INTEGER NOT NULL,
                        state           BLOB NOT NULL,
                        artifact_dir    TEXT NOT NULL,
                        created_at      INTEGER NOT NULL,
                        updated_at      INTEGER NOT NULL
                    )""",
                    "CREATE INDEX snapshot_by_creation ON snapshot (created_at, id)",
                    """
                    CREATE TABLE snapshot_alias (
                        alias       TEXT PRIMARY KEY,
                        snapshot_id TEXT NOT NULL REFERENCES snapshot (id) ON DELETE CASCADE
                    )""",
                    "CREATE INDEX snapshot_alias_by_snapshot ON snapshot_alias (snapshot_id)",
                    "CREATE TABLE secret (name TEXT PRIMARY KEY, value TEXT NOT NULL)"),
            // 2: custom extensions: the runtime instance id per sandbox, params carried into snapshots
            List.of(
                    "ALTER TABLE sandbox ADD COLUMN instance_id TEXT",
                    "ALTER TABLE snapshot ADD COLUMN custom_extension_params TEXT NOT NULL DEFAULT '{}'"),
            // 3: the Host header the proxy sends to a sandbox's ports (network.maskRequestHost), null when not masked
            List.of("ALTER TABLE sandbox ADD COLUMN mask_request_host TEXT"),
            // 4: templates requested through the build API, their builds and the builds' logs
            List.of(
                    """
                    CREATE TABLE template (
                        id            TEXT PRIMARY KEY,
                        cpu_count     INTEGER NOT NULL,
                        memory_mib    INTEGER NOT NULL,
                        disk_size_mib INTEGER NOT NULL,
                        created_at    INTEGER NOT NULL,
                        updated_at    INTEGER NOT NULL
                    )""",
                    """
                    CREATE TABLE template_name (
                        name        TEXT PRIMARY KEY,
                        template_id TEXT NOT NULL REFERENCES template (id) ON DELETE CASCADE,
                        position    INTEGER NOT NULL
                    )""",
                    "CREATE INDEX template_name_by_template ON template_name (template_id)",
                    """
                    CREATE TABLE template_build (
                        id          TEXT PRIMARY KEY,
                        template_id TEXT NOT NULL REFERENCES template (id) ON DELETE CASCADE,
                        status      TEXT NOT NULL,
                        reason      TEXT,
                        step        TEXT,
                        tags        TEXT NOT NULL,
                        created_at  INTEGER NOT NULL,
                        updated_at  INTEGER NOT NULL
                    )""",
                    "CREATE INDEX template_build_by_template ON template_build (template_id, created_at)",
                    "CREATE INDEX template_build_unfinished ON template_build (status) "
                            + "WHERE status IN ('WAITING', 'BUILDING')",
                    """
                    CREATE TABLE template_build_log (
                        build_id TEXT NOT NULL REFERENCES template_build (id) ON DELETE CASCADE,
                        seq      INTEGER NOT NULL,
                        at       INTEGER NOT NULL,
                        level    TEXT NOT NULL,
                        message  TEXT NOT NULL,
                        step     TEXT,
                        PRIMARY KEY (build_id, seq)
                    )"""),
            // 5: the snapshot a ready build became, and template tags (each names one build of its template)
            List.of("ALTER TABLE template_build ADD COLUMN snapshot_id TEXT", """
                    CREATE TABLE template_tag (
                        template_id TEXT NOT NULL REFERENCES template (id) ON DELETE CASCADE,
                        tag         TEXT NOT NULL,
                        build_id    TEXT NOT NULL REFERENCES template_build (id) ON DELETE CASCADE,
                        assigned_at INTEGER NOT NULL,
                        PRIMARY KEY (template_id, tag)
                    )"""),
            // 6: a template's default user and working directory, kept by its snapshot and its sandboxes
            List.of(
                    "ALTER TABLE sandbox ADD COLUMN guest_defaults TEXT NOT NULL DEFAULT '{}'",
                    "ALTER TABLE snapshot ADD COLUMN guest_defaults TEXT NOT NULL DEFAULT '{}'"),
            // 7: template build steps' cached layers (snapshots the catalog lists do not show)
            List.of("""
                    CREATE TABLE template_layer (
                        key         TEXT PRIMARY KEY,
                        snapshot_id TEXT NOT NULL,
                        created_at  INTEGER NOT NULL,
                        used_at     INTEGER NOT NULL
                    )""", "CREATE INDEX template_layer_used ON template_layer (used_at)"),
            // 8: persistent volumes (their content lives in the volume storage, not here)
            List.of("""
                    CREATE TABLE volume (
                        id         TEXT PRIMARY KEY,
                        name       TEXT NOT NULL UNIQUE,
                        size_mib   INTEGER NOT NULL,
                        created_at INTEGER NOT NULL
                    )"""),
            // 9: the volumes a sandbox mounts, and those a snapshot's sandboxes mount (JSON arrays)
            List.of(
                    "ALTER TABLE sandbox ADD COLUMN volumes TEXT NOT NULL DEFAULT '[]'",
                    "ALTER TABLE snapshot ADD COLUMN volumes TEXT NOT NULL DEFAULT '[]'"));

    private Schema() {}
}
