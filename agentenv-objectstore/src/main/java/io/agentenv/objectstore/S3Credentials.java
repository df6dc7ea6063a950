package io.agentenv.objectstore;

import static java.util.Objects.requireNonNull;

/**
 * A fixed S3 key pair. {@link #toString()} hides the secret.
 *
 * @param accessKeyId     the access key id
 * @param secretAccessKey the secret access key
 */
public record S3Credentials(String accessKeyId, String secretAccessKey) {
    public S3Credentials {
        requireNonNull(accessKeyId, "accessKeyId");
        requireNonNull(secretAccessKey, "secretAccessKey");
        if (accessKeyId.isEmpty() || secretAccessKey.isEmpty()) {
            throw new IllegalArgumentException("access key id and secret must not be empty");
        }
    }

    @Override
    public String toString() {
        return "S3Credentials[accessKeyId=" + accessKeyId + ", secretAccessKey=***]";
    }
}
