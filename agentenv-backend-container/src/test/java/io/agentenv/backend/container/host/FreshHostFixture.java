package io.agentenv.backend.container.host;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@link HostFixture} of its own for each test, in the annotated field: created before the test's {@code @BeforeEach}
 * methods (the test is skipped, or fails when host tests are required, on a host without the setup) and closed, with
 * its leak check, after its {@code @AfterEach} methods.
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(FreshHostFixture.Extension.class)
public @interface FreshHostFixture {

    /** Fills and closes the annotated fields. */
    final class Extension implements BeforeEachCallback, AfterEachCallback {
        private static final ExtensionContext.Namespace NAMESPACE =
                ExtensionContext.Namespace.create(FreshHostFixture.class);

        @Override
        public void beforeEach(ExtensionContext context) throws Exception {
            Object test = context.getRequiredTestInstance();
            for (Field field : annotated(test.getClass())) {
                HostFixture host = HostFixture.create();
                context.getStore(NAMESPACE).put(field, host);
                field.setAccessible(true);
                field.set(test, host);
            }
        }

        @Override
        public void afterEach(ExtensionContext context) throws Exception {
            for (Field field : annotated(context.getRequiredTestClass())) {
                HostFixture host = context.getStore(NAMESPACE).remove(field, HostFixture.class);
                if (host != null) {
                    host.close();
                }
            }
        }

        private static List<Field> annotated(Class<?> testClass) {
            List<Field> fields = new ArrayList<>();
            for (Class<?> type = testClass; type != null; type = type.getSuperclass()) {
                for (Field field : type.getDeclaredFields()) {
                    if (field.isAnnotationPresent(FreshHostFixture.class) && field.getType() == HostFixture.class) {
                        fields.add(field);
                    }
                }
            }
            return fields;
        }
    }
}
