-- The cluster's store: the same records as the SQLite store (agentenv-store-sqlite's Schema), plus the nodes that own
-- sandboxes and the sandboxes lost with a node. Instants of records are epoch nanoseconds (BIGINT), as the orchestrator
-- compares them to the nanosecond; lease and loss times are the database's clock (timestamptz). Add a migration as a
-- new file, never edit an applied one.

-- ---- cluster membership ---------------------------------------------------------------------------------------------

CREATE TABLE node (
    id            TEXT PRIMARY KEY,
    address       TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('ACTIVE', 'DRAINING', 'DEAD')),
    -- one more with each registration; sandbox rows carry the epoch of the registration that wrote them
    epoch         BIGINT NOT NULL CHECK (epoch > 0),
    lease_until   TIMESTAMPTZ NOT NULL,
    registered_at TIMESTAMPTZ NOT NULL,
    load          JSONB NOT NULL,
    -- an operator's drain: kept through deaths, so a drained node that dies and registers again is DRAINING
    drained       BOOLEAN NOT NULL DEFAULT FALSE
);

-- ---- sandboxes ------------------------------------------------------------------------------------------------------

CREATE TABLE sandbox (
    id                      TEXT PRIMARY KEY,
    template                TEXT NOT NULL,
    alias                   TEXT,
    state                   TEXT NOT NULL,
    started_at              BIGINT NOT NULL,
    timeout_ms              BIGINT NOT NULL,
    expires_at              BIGINT,
    on_timeout              TEXT NOT NULL,
    timeout_pause_mode      TEXT NOT NULL,
    auto_resume             BOOLEAN NOT NULL,
    secure                  BOOLEAN NOT NULL,
    cpu_count               INTEGER NOT NULL,
    memory_mib              INTEGER NOT NULL,
    disk_size_mib           INTEGER NOT NULL,
    metadata                JSONB NOT NULL,
    env_vars                JSONB NOT NULL,
    network                 JSONB NOT NULL,
    -- kept as the text the caller gave (the orchestrator compares it as a string)
    custom_extension_params TEXT NOT NULL,
    paused_state            BYTEA,
    paused_artifact_dir     TEXT,
    instance_id             TEXT,
    mask_request_host       TEXT,
    guest_defaults          JSONB NOT NULL,
    volumes                 JSONB NOT NULL,
    version                 BIGINT NOT NULL DEFAULT 0,
    -- the owner: null for a paused sandbox its dead node released (any node may resume it)
    node_id                 TEXT REFERENCES node (id),
    node_epoch              BIGINT,
    CHECK ((node_id IS NULL) = (node_epoch IS NULL))
);
CREATE INDEX sandbox_by_start ON sandbox (started_at, id);
CREATE INDEX sandbox_by_node ON sandbox (node_id, state);
CREATE INDEX sandbox_by_expiry ON sandbox (node_id, expires_at) WHERE state = 'RUNNING' AND expires_at IS NOT NULL;
CREATE INDEX sandbox_by_volume ON sandbox USING GIN (volumes jsonb_path_ops);

CREATE TABLE sandbox_metadata (
    sandbox_id TEXT NOT NULL REFERENCES sandbox (id) ON DELETE CASCADE,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    PRIMARY KEY (sandbox_id, key)
);
CREATE INDEX sandbox_metadata_by_pair ON sandbox_metadata (key, value);

-- sandboxes that were running on a node declared dead: they no longer exist, and the cluster remembers why
CREATE TABLE lost_sandbox (
    id       TEXT PRIMARY KEY,
    node     TEXT NOT NULL REFERENCES node (id),
    template TEXT NOT NULL,
    state    TEXT NOT NULL,
    metadata JSONB NOT NULL,
    instance_id TEXT,
    reason   TEXT NOT NULL,
    lost_at  TIMESTAMPTZ NOT NULL
);

-- ---- snapshots and secrets ------------------------------------------------------------------------------------------

CREATE TABLE snapshot (
    id                      TEXT PRIMARY KEY,
    source_sandbox          TEXT,
    source_template         TEXT NOT NULL,
    env_vars                JSONB NOT NULL,
    cpu_count               INTEGER NOT NULL,
    memory_mib              INTEGER NOT NULL,
    disk_size_mib           INTEGER NOT NULL,
    state                   BYTEA NOT NULL,
    artifact_dir            TEXT NOT NULL,
    created_at              BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL,
    custom_extension_params TEXT NOT NULL DEFAULT '{}',
    guest_defaults          JSONB NOT NULL DEFAULT '{}',
    volumes                 JSONB NOT NULL DEFAULT '[]'
);
CREATE INDEX snapshot_by_creation ON snapshot (created_at, id);

CREATE TABLE snapshot_alias (
    alias       TEXT PRIMARY KEY,
    snapshot_id TEXT NOT NULL REFERENCES snapshot (id) ON DELETE CASCADE
);
CREATE INDEX snapshot_alias_by_snapshot ON snapshot_alias (snapshot_id);

CREATE TABLE secret (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- ---- templates requested through the build API, their builds, logs, tags and cached layers -------------------------

CREATE TABLE template (
    id            TEXT PRIMARY KEY,
    cpu_count     INTEGER NOT NULL,
    memory_mib    INTEGER NOT NULL,
    disk_size_mib INTEGER NOT NULL,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE TABLE template_name (
    name        TEXT PRIMARY KEY,
    template_id TEXT NOT NULL REFERENCES template (id) ON DELETE CASCADE,
    position    INTEGER NOT NULL
);
CREATE INDEX template_name_by_template ON template_name (template_id);

CREATE TABLE template_build (
    id          TEXT PRIMARY KEY,
    template_id TEXT NOT NULL REFERENCES template (id) ON DELETE CASCADE,
    status      TEXT NOT NULL,
    reason      TEXT,
    step        TEXT,
    tags        JSONB NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL,
    snapshot_id TEXT,
    -- the node that runs the build (its restart fails the build if it was unfinished)
    node_id     TEXT NOT NULL REFERENCES node (id)
);
CREATE INDEX template_build_by_template ON template_build (template_id, created_at);
CREATE INDEX template_build_unfinished ON template_build (node_id) WHERE status IN ('WAITING', 'BUILDING');

CREATE TABLE template_build_log (
    build_id TEXT NOT NULL REFERENCES template_build (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    at       BIGINT NOT NULL,
    level    TEXT NOT NULL,
    message  TEXT NOT NULL,
    step     TEXT,
    PRIMARY KEY (build_id, seq)
);

CREATE TABLE template_tag (
    template_id TEXT NOT NULL REFERENCES template (id) ON DELETE CASCADE,
    tag         TEXT NOT NULL,
    build_id    TEXT NOT NULL REFERENCES template_build (id) ON DELETE CASCADE,
    assigned_at BIGINT NOT NULL,
    PRIMARY KEY (template_id, tag)
);

CREATE TABLE template_layer (
    key         TEXT PRIMARY KEY,
    snapshot_id TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    used_at     BIGINT NOT NULL
);
CREATE INDEX template_layer_used ON template_layer (used_at);

-- ---- persistent volumes (their content lives in the volume storage, not here) ------------------------------------

CREATE TABLE volume (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    size_mib   INTEGER NOT NULL,
    created_at BIGINT NOT NULL
);
