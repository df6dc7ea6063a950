package io.agentenv.cli;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.BuildLogEntry;
import io.agentenv.api.model.TemplateBuildInfo;
import io.agentenv.api.model.TemplateBuildRequestV3;
import io.agentenv.api.model.TemplateBuildStartV2;
import io.agentenv.api.model.TemplateBuildStatus;
import io.agentenv.api.model.TemplateRequestResponseV3;
import io.agentenv.api.model.TemplateStep;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;

/**
 * One template build as the E2B SDK runs it: request it ({@code POST /v3/templates}), upload the files of its COPY steps
 * that the server does not have ({@code GET /templates/{id}/files/{hash}}, then a PUT of the gzipped tar), start it,
 * and follow its status, printing the log as it grows, until it is ready or failed.
 */
final class TemplateBuildRun {
    /** What to build: the name (with an optional {@code :tag}), tags, resources, base and steps. */
    record Request(
            Optional<String> name,
            List<String> tags,
            Optional<Integer> cpuCount,
            Optional<Integer> memoryMB,
            Optional<String> fromImage,
            Optional<String> fromTemplate,
            List<Dockerfile.Step> steps,
            Optional<String> startCmd,
            Optional<String> readyCmd,
            boolean force) {
        Request {
            tags = List.copyOf(tags);
            steps = List.copyOf(steps);
        }
    }

    /** How the build ended. */
    record Result(String templateId, String buildId, List<String> names, List<String> tags) {}

    static final Duration POLL = Duration.ofMillis(250);

    private final ApiClient client;
    private final PrintWriter log;
    private final Path context;
    private final Duration poll;

    /**
     * @param log     where progress and the build's log lines go
     * @param context the directory COPY sources are relative to
     */
    TemplateBuildRun(ApiClient client, PrintWriter log, Path context, Duration poll) {
        this.client = requireNonNull(client, "client is null");
        this.log = requireNonNull(log, "log is null");
        this.context = requireNonNull(context, "context is null");
        this.poll = requireNonNull(poll, "poll is null");
    }

    /** Runs the build to its end; ApiException with the reason when it fails. */
    Result run(Request request) throws IOException {
        TemplateRequestResponseV3 requested = client.requestBuild(new TemplateBuildRequestV3(
                request.name().orElse(null),
                null,
                request.tags().isEmpty() ? null : request.tags(),
                request.cpuCount().orElse(null),
                request.memoryMB().orElse(null),
                null));
        String templateId = requested.templateID();
        String buildId = requested.buildID();
        say("building template " + templateId
                + (requested.names().isEmpty() ? "" : " (" + String.join(", ", requested.names()) + ")")
                + ", build " + buildId);
        List<TemplateStep> steps = new ArrayList<>();
        for (Dockerfile.Step step : request.steps()) {
            steps.add(step.type().equals("COPY") ? copy(templateId, step, request.force()) : wire(step));
        }
        client.startBuild(
                templateId,
                buildId,
                new TemplateBuildStartV2(
                        request.fromImage().orElse(null),
                        null,
                        request.fromTemplate().orElse(null),
                        steps,
                        request.startCmd().orElse(null),
                        request.readyCmd().orElse(null),
                        request.force() ? Boolean.TRUE : null));
        TemplateBuildInfo status = follow(templateId, buildId);
        if (status.status() != TemplateBuildStatus.READY) {
            String reason = status.reason() == null
                    ? "no reason given"
                    : status.reason().message();
            throw new ApiException(0, "build " + buildId + " of template " + templateId + " failed: " + reason);
        }
        return new Result(templateId, buildId, requested.names(), requested.tags());
    }

    private static TemplateStep wire(Dockerfile.Step step) {
        return new TemplateStep(step.type(), step.args(), null, null);
    }

    /** The COPY step with its files' hash, after uploading them if the server does not have them. */
    private TemplateStep copy(String templateId, Dockerfile.Step step, boolean force) throws IOException {
        String src = step.args().get(0);
        String dest = step.args().get(1);
        List<TemplateFiles.Entry> files = TemplateFiles.files(context, src);
        String hash = TemplateFiles.hash(src, dest, files);
        ApiClient.Upload upload = client.fileUpload(templateId, hash);
        if (upload.url().isPresent() && (!upload.present() || force)) {
            Path tar = Files.createTempFile("aenv-template-", ".tar.gz");
            try {
                TemplateFiles.writeTarGz(files, tar);
                client.upload(upload.url().get(), upload.headers(), tar);
            } finally {
                Files.deleteIfExists(tar);
            }
            say("uploaded " + src + " (" + files.size() + (files.size() == 1 ? " file)" : " files)"));
        } else {
            say("skipped uploading " + src + ": the server has it");
        }
        return new TemplateStep("COPY", step.args(), hash, null);
    }

    /** Polls the status, printing new log lines, until the build ends and its log is read out. */
    private TemplateBuildInfo follow(String templateId, String buildId) {
        int offset = 0;
        while (true) {
            TemplateBuildInfo status = client.buildStatus(templateId, buildId, offset);
            offset += print(status.logEntries());
            if (status.status() == TemplateBuildStatus.READY || status.status() == TemplateBuildStatus.ERROR) {
                List<BuildLogEntry> tail = status.logEntries();
                while (!tail.isEmpty()) { // lines written after this status was read
                    tail = client.buildStatus(templateId, buildId, offset).logEntries();
                    offset += print(tail);
                }
                return status;
            }
            LockSupport.parkNanos(poll.toNanos());
        }
    }

    private int print(List<BuildLogEntry> entries) {
        for (BuildLogEntry entry : entries) {
            String prefix = entry.step() == null ? "" : "[" + entry.step() + "] ";
            String level = entry.level().equals("info") ? "" : entry.level() + ": ";
            log.println(Printable.of(prefix + level + entry.message()));
        }
        log.flush();
        return entries.size();
    }

    private void say(String line) {
        log.println(line);
        log.flush();
    }

    /** {@code KEY=VALUE} words as a map; IllegalArgumentException naming the option otherwise. */
    static Map<String, String> pairs(List<String> words, String option) {
        Map<String, String> pairs = new LinkedHashMap<>();
        for (String word : words) {
            int eq = word.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(option + " takes NAME=VALUE, got " + word);
            }
            pairs.put(word.substring(0, eq), word.substring(eq + 1));
        }
        return pairs;
    }
}
