package io.agentenv.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.agentenv.backend.container.lifecycle.ContainerSettings;
import io.agentenv.server.config.GatewayConfig;
import io.agentenv.server.config.ServerConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayNameGeneration;
import org.junit.jupiter.api.DisplayNameGenerator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The deployment files under {@code deploy/} (docs/deployment.md) against the code: every Kubernetes manifest parses,
 * every environment key the manifests, the systemd units, their environment files and the image set is one the node
 * or the gateway reads (backend settings as the container backend checks them), the secrets and mounts they name
 * exist, and their command lines are the jar's entry points. The manifests are not run on Kubernetes here.
 */
@DisplayNameGeneration(DisplayNameGenerator.ReplaceUnderscores.class)
class DeploymentFilesTest {
    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final Path DEPLOY = REPO.resolve("deploy");

    /** The AWS SDK's default credentials chain, which the S3 object store uses. */
    private static final Set<String> AWS_KEYS = Set.of("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY");

    private static final Set<String> NODE_REQUIRED = Set.of(
            "AENV_API_KEY",
            "AENV_CLUSTER_DATABASE_URL",
            "AENV_CLUSTER_DATABASE_PASSWORD_FILE",
            "AENV_NODE_ID",
            "AENV_NODE_ADDRESS",
            "AENV_SANDBOX_DOMAIN");
    private static final Set<String> GATEWAY_REQUIRED = Set.of(
            "AENV_API_KEY", "AENV_CLUSTER_DATABASE_URL", "AENV_CLUSTER_DATABASE_PASSWORD_FILE", "AENV_SANDBOX_DOMAIN");

    @TempDir
    Path tmp;

    @Test
    void every_manifest_parses_and_names_its_kind_and_namespace() throws IOException {
        List<Map<String, Object>> docs = manifests();
        assertThat(docs)
                .extracting(d -> d.get("kind"))
                .contains("Namespace", "Secret", "Service", "Deployment", "DaemonSet");
        for (Map<String, Object> doc : docs) {
            assertThat(doc).containsKeys("apiVersion", "kind", "metadata");
            Map<String, Object> metadata = map(doc.get("metadata"));
            assertThat(metadata.get("name")).as(doc.get("kind") + " name").isNotNull();
            if (!"Namespace".equals(doc.get("kind"))) {
                assertThat(metadata.get("namespace"))
                        .as(metadata.get("name") + "")
                        .isEqualTo("agentenv");
            }
        }
    }

    @Test
    void the_env_keys_set_for_nodes_and_gateways_are_ones_the_code_reads() throws IOException {
        Map<String, String> node = env(container("DaemonSet", "agentenv-node"));
        Map<String, String> gateway = env(container("Deployment", "agentenv-gateway"));
        Map<String, String> image = dockerfileEnv();
        Map<String, String> nodeFile = envFile(DEPLOY.resolve("systemd/node.env.example"));
        Map<String, String> gatewayFile = envFile(DEPLOY.resolve("systemd/gateway.env.example"));
        Map<String, String> nodeUnit = unitEnvironment(DEPLOY.resolve("systemd/agentenv-node.service"));
        Map<String, String> gatewayUnit = unitEnvironment(DEPLOY.resolve("systemd/agentenv-gateway.service"));

        assertNodeKeys("the node DaemonSet", node);
        assertNodeKeys("the image", image);
        assertNodeKeys("node.env.example", nodeFile);
        assertNodeKeys("agentenv-node.service", nodeUnit);
        assertGatewayKeys("the gateway Deployment", gateway);
        assertGatewayKeys("gateway.env.example", gatewayFile);
        assertGatewayKeys("agentenv-gateway.service", gatewayUnit);

        assertThat(node).containsKeys(NODE_REQUIRED.toArray(String[]::new));
        assertThat(merge(nodeFile, nodeUnit)).containsKeys(NODE_REQUIRED.toArray(String[]::new));
        assertThat(gateway).containsKeys(GATEWAY_REQUIRED.toArray(String[]::new));
        assertThat(merge(gatewayFile, gatewayUnit)).containsKeys(GATEWAY_REQUIRED.toArray(String[]::new));
        assertThat(gateway.get("AENV_SANDBOX_DOMAIN")).isEqualTo(node.get("AENV_SANDBOX_DOMAIN"));
        assertThat(gatewayFile.get("AENV_SANDBOX_DOMAIN")).isEqualTo(nodeFile.get("AENV_SANDBOX_DOMAIN"));
        assertThat(gatewayFile.get("AENV_API_KEY")).isEqualTo(nodeFile.get("AENV_API_KEY"));
    }

    @Test
    void the_secrets_volumes_and_ports_the_manifests_name_exist() throws IOException {
        Map<String, Object> secret = manifests().stream()
                .filter(d -> "Secret".equals(d.get("kind")))
                .findFirst()
                .orElseThrow();
        Set<String> secretKeys = map(secret.get("stringData")).keySet();
        for (String workload : List.of("DaemonSet/agentenv-node", "Deployment/agentenv-gateway")) {
            String[] kindName = workload.split("/");
            Map<String, Object> pod = podSpec(kindName[0], kindName[1]);
            Map<String, Object> container = container(kindName[0], kindName[1]);
            for (Map<String, Object> var : list(container.get("env"))) {
                if (var.get("valueFrom") instanceof Map<?, ?> from
                        && from.get("secretKeyRef") instanceof Map<?, ?> ref) {
                    assertThat(ref.get("name"))
                            .isEqualTo(map(secret.get("metadata")).get("name"));
                    assertThat(secretKeys).as(workload + " " + var.get("name")).contains((String) ref.get("key"));
                }
            }
            Map<String, Map<String, Object>> volumes = new LinkedHashMap<>();
            list(pod.get("volumes")).forEach(v -> volumes.put((String) v.get("name"), v));
            List<Map<String, Object>> mounts = list(container.get("volumeMounts"));
            for (Map<String, Object> mount : mounts) {
                assertThat(volumes)
                        .as(workload + " mounts " + mount.get("name"))
                        .containsKey((String) mount.get("name"));
            }
            String passwordFile = env(container).get("AENV_CLUSTER_DATABASE_PASSWORD_FILE");
            Map<String, Object> passwordMount = mounts.stream()
                    .filter(m -> passwordFile.startsWith(m.get("mountPath") + "/"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(workload + ": nothing is mounted at " + passwordFile));
            Map<String, Object> passwordVolume =
                    map(volumes.get((String) passwordMount.get("name")).get("secret"));
            assertThat(list(passwordVolume.get("items"))).anySatisfy(item -> {
                assertThat(secretKeys).contains((String) item.get("key"));
                assertThat(passwordMount.get("mountPath") + "/" + item.get("path"))
                        .isEqualTo(passwordFile);
            });
            int port = (Integer) list(container.get("ports")).getFirst().get("containerPort");
            assertThat(env(container).get("AENV_LISTEN")).isEqualTo("0.0.0.0:" + port);
        }
        assertThat(podSpec("DaemonSet", "agentenv-node").get("hostNetwork")).isEqualTo(true);
        assertThat(env(container("DaemonSet", "agentenv-node")).get("AENV_NODE_ADDRESS"))
                .isEqualTo("http://$(HOST_IP):3000");
    }

    @Test
    void image_and_command_lines_agree_with_the_jar_s_entry_points() throws IOException {
        String pom = Files.readString(REPO.resolve("agentenv-server/pom.xml"), StandardCharsets.UTF_8);
        String jar = first(pom, "<finalName>([^<]+)</finalName>") + ".jar";
        assertThat(first(pom, "<mainClass>(io\\.agentenv\\.server\\.[A-Za-z]+)</mainClass>"))
                .isEqualTo(Main.class.getName());
        String libDir = first(pom, "<classpathPrefix>([^<]+)</classpathPrefix>");

        String dockerfile = Files.readString(DEPLOY.resolve("container/Dockerfile"), StandardCharsets.UTF_8);
        List<String> entrypoint = Arrays.stream(
                        first(dockerfile, "(?m)^ENTRYPOINT \\[(.*)]$").split(","))
                .map(s -> s.strip().replaceAll("^\"|\"$", ""))
                .toList();
        assertThat(entrypoint).hasSize(4);
        assertThat(entrypoint.get(0)).endsWith("/bin/java");
        assertThat(entrypoint.subList(1, 4))
                .containsExactly("@/opt/agentenv/jvm.options", "-jar", "/opt/agentenv/" + jar);
        assertThat(dockerfile)
                .contains("COPY agentenv-server/target/" + jar + " agentenv-server/target/jvm.options /opt/agentenv/")
                .contains("COPY agentenv-server/target/" + libDir + " /opt/agentenv/" + libDir)
                .contains("agentenv-envd/target/agentenv-envd.jar agentenv-envd/target/jvm.options "
                        + "agentenv-envd/target/envd.aot /opt/agentenv/envd/");
        assertThat(Path.of(entrypoint.get(0)).getParent().getParent().toString())
                .isEqualTo(dockerfileEnv().get("AENV_BACKEND_JDK_HOME"));

        Map<String, Object> node = container("DaemonSet", "agentenv-node");
        Map<String, Object> gateway = container("Deployment", "agentenv-gateway");
        assertThat(node.get("image")).isEqualTo(gateway.get("image"));
        assertThat(node).doesNotContainKeys("command", "args"); // no argument: a node
        assertThat(gateway).doesNotContainKey("command");
        assertThat(gateway.get("args")).isEqualTo(List.of(Main.GATEWAY_COMMAND));

        String target = "/opt/agentenv/agentenv-server/target/";
        assertThat(execStart(DEPLOY.resolve("systemd/agentenv-node.service")))
                .endsWith("@" + target + "jvm.options", "-jar", target + jar);
        assertThat(execStart(DEPLOY.resolve("systemd/agentenv-gateway.service")))
                .endsWith("@" + target + "jvm.options", "-jar", target + jar, Main.GATEWAY_COMMAND);
        String java = execStart(DEPLOY.resolve("systemd/agentenv-node.service")).getFirst();
        assertThat(java)
                .isEqualTo(
                        envFile(DEPLOY.resolve("systemd/node.env.example")).get("AENV_BACKEND_JDK_HOME") + "/bin/java");
        assertThat(Files.readString(REPO.resolve("agentenv-server/jvm.options"), StandardCharsets.UTF_8))
                .as("the options file the commands pass with @")
                .isNotBlank();
    }

    private void assertNodeKeys(String where, Map<String, String> env) {
        Set<String> unknown = new TreeSet<>();
        Map<String, String> backend = new LinkedHashMap<>();
        for (String key : env.keySet()) {
            if (key.startsWith(ServerConfig.BACKEND_SETTING_PREFIX)) {
                backend.put(
                        key.substring(ServerConfig.BACKEND_SETTING_PREFIX.length())
                                .toLowerCase(Locale.ROOT),
                        "1");
            } else if (!ServerConfig.knownKeys().contains(key) && !AWS_KEYS.contains(key) && !helper(key, env)) {
                unknown.add(key);
            }
        }
        assertThat(unknown).as(where + ": keys no node reads").isEmpty();
        try {
            ContainerSettings.from(backend, tmp);
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).as(where).doesNotContain("unknown container backend setting");
        }
    }

    private static void assertGatewayKeys(String where, Map<String, String> env) {
        Set<String> unknown = new TreeSet<>(env.keySet());
        unknown.removeIf(key -> GatewayConfig.KEYS.contains(key) || helper(key, env));
        assertThat(unknown).as(where + ": keys no gateway reads").isEmpty();
    }

    /** A variable only there to be expanded into another's value ({@code $(HOST_IP)}), or the image's JAVA_HOME. */
    private static boolean helper(String key, Map<String, String> env) {
        return key.equals("JAVA_HOME")
                || env.values().stream().anyMatch(v -> v != null && v.contains("$(" + key + ")"));
    }

    private static List<Map<String, Object>> manifests() throws IOException {
        List<Map<String, Object>> docs = new ArrayList<>();
        List<Path> files;
        try (Stream<Path> listing = Files.list(DEPLOY.resolve("kubernetes"))) {
            files = listing.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
        }
        assertThat(files).isNotEmpty();
        for (Path file : files) {
            try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(in)) {
                    assertThat(doc).as(file.toString()).isInstanceOf(Map.class);
                    docs.add(map(doc));
                }
            }
        }
        return docs;
    }

    private static Map<String, Object> podSpec(String kind, String name) throws IOException {
        Map<String, Object> workload = manifests().stream()
                .filter(d -> kind.equals(d.get("kind"))
                        && name.equals(map(d.get("metadata")).get("name")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " " + name));
        return map(map(map(workload.get("spec")).get("template")).get("spec"));
    }

    private static Map<String, Object> container(String kind, String name) throws IOException {
        List<Map<String, Object>> containers = list(podSpec(kind, name).get("containers"));
        assertThat(containers).hasSize(1);
        return containers.getFirst();
    }

    private static Map<String, String> env(Map<String, Object> container) {
        Map<String, String> env = new LinkedHashMap<>();
        for (Map<String, Object> var : list(container.get("env"))) {
            env.put(
                    (String) var.get("name"),
                    var.get("value") == null ? null : var.get("value").toString());
        }
        return env;
    }

    private static Map<String, String> dockerfileEnv() throws IOException {
        String dockerfile = Files.readString(DEPLOY.resolve("container/Dockerfile"), StandardCharsets.UTF_8);
        String block = first(dockerfile, "(?ms)^ENV (.*?)(?<!\\\\)\\n");
        Map<String, String> env = new LinkedHashMap<>();
        for (String part : block.replace("\\\n", " ").trim().split("\\s+")) {
            int eq = part.indexOf('=');
            env.put(part.substring(0, eq), part.substring(eq + 1));
        }
        return env;
    }

    /** A systemd environment file: {@code KEY=value} lines, {@code #} comments. */
    private static Map<String, String> envFile(Path file) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String trimmed = line.strip();
            if (trimmed.isEmpty() || trimmed.startsWith("#")) {
                continue;
            }
            int eq = trimmed.indexOf('=');
            assertThat(eq).as(file + ": " + line).isPositive();
            env.put(trimmed.substring(0, eq), trimmed.substring(eq + 1));
        }
        return env;
    }

    /** A unit's {@code Environment=KEY=value} lines. */
    private static Map<String, String> unitEnvironment(Path unit) throws IOException {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : Files.readAllLines(unit, StandardCharsets.UTF_8)) {
            if (line.startsWith("Environment=")) {
                String assignment = line.substring("Environment=".length());
                int eq = assignment.indexOf('=');
                env.put(assignment.substring(0, eq), assignment.substring(eq + 1));
            }
        }
        return env;
    }

    private static List<String> execStart(Path unit) throws IOException {
        String line = Files.readAllLines(unit, StandardCharsets.UTF_8).stream()
                .filter(l -> l.startsWith("ExecStart="))
                .findFirst()
                .orElseThrow();
        return List.of(line.substring("ExecStart=".length()).trim().split("\\s+"));
    }

    private static Map<String, String> merge(Map<String, String> a, Map<String, String> b) {
        Map<String, String> merged = new LinkedHashMap<>(a);
        merged.putAll(b);
        return merged;
    }

    private static String first(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        assertThat(m.find()).as(regex).isTrue();
        return m.group(1);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object value) {
        assertThat(value).isInstanceOf(Map.class);
        return (Map<String, Object>) value;
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object value) {
        if (value == null) {
            return List.of();
        }
        assertThat(value).isInstanceOf(List.class);
        return (List<Map<String, Object>>) value;
    }
}
