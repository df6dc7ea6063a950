package io.agentenv.server.api;

import static java.util.Objects.requireNonNull;

import io.agentenv.api.model.NewVolume;
import io.agentenv.api.model.Volume;
import io.agentenv.api.model.VolumeAndToken;
import io.agentenv.volumes.VolumeRecord;
import io.agentenv.volumes.Volumes;
import java.util.List;
import java.util.Optional;

/**
 * The volume management routes, with the API key, as the SDK's {@code Volume.create/list/getInfo/connect/destroy}
 * send them: {@code POST /volumes} (201 {@code VolumeAndToken}), {@code GET /volumes}, {@code GET
 * /volumes/{volumeID}} and {@code DELETE /volumes/{volumeID}} (204).
 */
final class VolumeEndpoints {
    private final Volumes volumes;
    private final Json json;

    VolumeEndpoints(Volumes volumes, Json json) {
        this.volumes = requireNonNull(volumes, "volumes is null");
        this.json = requireNonNull(json, "json is null");
    }

    void register(Router router) {
        router.add("POST", "/volumes", this::create)
                .add("GET", "/volumes", this::list)
                .add("GET", "/volumes/{volumeID}", this::get)
                .add("DELETE", "/volumes/{volumeID}", this::delete);
    }

    private Reply create(Exchange ex) {
        NewVolume request = json.read(ex.body(), NewVolume.class, false);
        VolumeRecord volume = volumes.create(request.name(), Optional.ofNullable(request.sizeMiB()));
        return new Reply.Json(201, withToken(volume));
    }

    private Reply list(Exchange ex) {
        List<Volume> listed =
                volumes.list().stream().map(v -> new Volume(v.name(), v.id())).toList();
        return new Reply.Json(200, listed);
    }

    private Reply get(Exchange ex) {
        return new Reply.Json(200, withToken(volumes.get(ex.param("volumeID"))));
    }

    private Reply delete(Exchange ex) {
        volumes.delete(ex.param("volumeID"));
        return Reply.NO_CONTENT;
    }

    private VolumeAndToken withToken(VolumeRecord volume) {
        return new VolumeAndToken(volume.id(), volume.name(), volumes.token(volume.id()), null, volume.sizeMiB());
    }
}
