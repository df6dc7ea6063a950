package io.agentenv.sdk;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentenv.sdk.internal.ApiClient;
import io.agentenv.sdk.internal.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The templates sandboxes are created from ({@code GET /templates}, {@code GET /templates/{id}}).
 *
 * <p>Building templates ({@code Template.build} in E2B's SDKs) is not offered: this server has no template builds
 * yet (it answers 501), its templates are the built-in ones (such as {@code base}) and snapshots. Volumes do not
 * exist on this server either, so this SDK has no volume API.
 */
public final class Templates {
    private Templates() {}

    /** Every template, with the environment's configuration. */
    public static List<TemplateInfo> list() {
        return list(SandboxConfig.fromEnvironment());
    }

    /** Every template. */
    public static List<TemplateInfo> list(SandboxConfig config) {
        ApiClient.Response r = new ApiClient(config).get("/templates", Map.of());
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        List<TemplateInfo> out = new ArrayList<>();
        for (JsonNode t : r.json()) {
            out.add(new TemplateInfo(
                    Json.text(t, "templateID"),
                    names(t),
                    t.path("cpuCount").asInt(),
                    t.path("memoryMB").asInt(),
                    t.path("diskSizeMB").asInt(),
                    t.path("public").asBoolean(),
                    Json.text(t, "envdVersion", ""),
                    Json.text(t, "buildStatus", "")));
        }
        return out;
    }

    /** One template by id or alias; {@link NotFoundException} when there is none. */
    public static TemplateInfo get(String templateIdOrAlias, SandboxConfig config) {
        ApiClient.Response r = new ApiClient(config).get("/templates/" + ApiClient.encode(templateIdOrAlias), Map.of());
        if (!r.ok()) {
            throw ApiClient.error(r);
        }
        JsonNode t = r.json();
        JsonNode build = t.path("builds").path(0);
        return new TemplateInfo(
                Json.text(t, "templateID"),
                names(t),
                build.path("cpuCount").asInt(),
                build.path("memoryMB").asInt(),
                build.path("diskSizeMB").asInt(),
                t.path("public").asBoolean(),
                Json.text(build, "envdVersion", ""),
                Json.text(build, "status", ""));
    }

    /** One template by id or alias, with the environment's configuration. */
    public static TemplateInfo get(String templateIdOrAlias) {
        return get(templateIdOrAlias, SandboxConfig.fromEnvironment());
    }

    private static List<String> names(JsonNode t) {
        List<String> names = Json.list(t, "names");
        return names.isEmpty() ? Json.list(t, "aliases") : names;
    }
}
