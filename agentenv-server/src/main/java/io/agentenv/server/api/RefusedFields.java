package io.agentenv.server.api;

import io.agentenv.api.model.ConnectSandbox;
import io.agentenv.api.model.CreateSandboxRequest;
import io.agentenv.api.model.ResumedSandbox;
import io.agentenv.api.model.SandboxNetworkConfig;
import io.agentenv.api.model.SandboxNetworkUpdateConfig;
import io.agentenv.orchestrator.AgentEnvException;
import java.util.Collection;
import java.util.Map;

/**
 * The request fields of E2B's schema that ask for something this server does not have. Each is refused with
 * INVALID_ARGUMENT (400) naming the field when it asks for something (present and non-empty); absent, null or empty
 * it asks for nothing and is accepted. Every other field of the schema is honoured; fields in no schema are ignored
 * (as E2B's API does), so newer SDKs keep working. The table in docs/architecture.md lists every field.
 */
final class RefusedFields {
    private RefusedFields() {}

    static void check(CreateSandboxRequest req) {
        refuseIfSet("mcp", req.mcp(), "this server has no MCP gateway");
        Object tokens = req.iam() == null ? null : req.iam().get("tokens");
        refuseIfSet("iam.tokens", tokens, "this server issues no workload identity tokens");
        if (req.network() != null) {
            check(req.network());
        }
        boolean autoResume = req.autoResume() != null && req.autoResume().enabledOrDefault();
        if (req.autoPauseOrDefault() && !req.autoPauseMemoryOrDefault() && autoResume) {
            throw AgentEnvException.invalidArgument("autoPauseMemory=false cannot be combined with autoResume: a "
                    + "sandbox paused without its memory must be resumed explicitly (connect)");
        }
    }

    private static void check(SandboxNetworkConfig network) {
        refuseIfSet(
                "network.egressProxy", network.egressProxy(), "egress through a proxy is not supported by this server");
        refuseIfSet("network.rules", network.rules(), "egress transform rules are not supported by this server");
        refuseIfSet(
                "network.httpsPorts",
                network.httpsPorts(),
                "the sandbox proxy reaches sandbox ports over plain HTTP only");
    }

    static void check(SandboxNetworkUpdateConfig update) {
        refuseIfSet("egressProxy", update.egressProxy(), "egress through a proxy is not supported by this server");
        refuseIfSet("rules", update.rules(), "egress transform rules are not supported by this server");
    }

    static void check(ConnectSandbox connect) {
        refuseMemoryFalse(connect.memory());
    }

    static void check(ResumedSandbox resume) {
        refuseMemoryFalse(resume.memory());
        if (resume.autoPause() != null) {
            throw AgentEnvException.invalidArgument("autoPause is not supported on resume: what a timeout does is "
                    + "set at create (autoPause, lifecycle.onTimeout)");
        }
    }

    private static void refuseMemoryFalse(Boolean memory) {
        if (memory != null && !memory) {
            throw AgentEnvException.invalidArgument("memory=false (resume from disk only, onResume 'reboot') is not "
                    + "supported by this server: a paused sandbox resumes as it was paused");
        }
    }

    private static void refuseIfSet(String field, Object value, String why) {
        boolean set = switch (value) {
            case null -> false;
            case Map<?, ?> map -> !map.isEmpty();
            case Collection<?> list -> !list.isEmpty();
            default -> true;
        };
        if (set) {
            throw AgentEnvException.invalidArgument(field + " is not supported: " + why + "; leave it out");
        }
    }
}
