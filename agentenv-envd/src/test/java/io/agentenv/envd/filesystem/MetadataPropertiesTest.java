package io.agentenv.envd.filesystem;

import static org.assertj.core.api.Assertions.assertThatCode;

import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;

/** Metadata arrives in client headers: validation either accepts it or refuses it as an invalid argument. */
class MetadataPropertiesTest {
    @Property
    void validation_fails_only_with_invalid_argument(
            @ForAll @Size(max = 5) Map<@StringLength(max = 300) String, @StringLength(max = 2000) String> metadata) {
        assertThatCode(() -> {
            try {
                Metadata.validate(metadata);
            } catch (FsException e) {
                if (e.error() != FsError.INVALID_ARGUMENT) {
                    throw e;
                }
            }
        }).doesNotThrowAnyException();
    }
}
