package io.agentenv.backend.container;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * One {@link BackendFixture} for all tests of a class, in the annotated static field: created before the class's
 * {@code @BeforeAll} methods; after each test's {@code @AfterEach} methods, the sandboxes the test launched through it
 * are closed ({@link BackendFixture#closeLaunched}) and it is checked for leaks
 * ({@link BackendFixture#assertNothingLeaked}); closed, with its final check, after the class.
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@ExtendWith(SharedBackend.Extension.class)
public @interface SharedBackend {

    /** Settings on top of the fixture's, as {@code key=value}. */
    String[] settings() default {};

    /** Fills, checks and closes the annotated static fields. */
    final class Extension implements BeforeAllCallback, AfterEachCallback, AfterAllCallback {
        private static final ExtensionContext.Namespace NAMESPACE =
                ExtensionContext.Namespace.create(SharedBackend.class);

        @Override
        public void beforeAll(ExtensionContext context) throws Exception {
            for (Field field : annotated(context.getRequiredTestClass())) {
                Map<String, String> settings = new HashMap<>();
                for (String setting : field.getAnnotation(SharedBackend.class).settings()) {
                    int equals = setting.indexOf('=');
                    if (equals <= 0) {
                        throw new IllegalArgumentException("not key=value: " + setting);
                    }
                    settings.put(setting.substring(0, equals), setting.substring(equals + 1));
                }
                BackendFixture backend = BackendFixture.create(settings);
                context.getStore(NAMESPACE).put(field, backend);
                field.setAccessible(true);
                field.set(null, backend);
            }
        }

        @Override
        public void afterEach(ExtensionContext context) throws Exception {
            for (Field field : annotated(context.getRequiredTestClass())) {
                BackendFixture backend = context.getStore(NAMESPACE).get(field, BackendFixture.class);
                if (backend != null) {
                    try {
                        backend.closeLaunched();
                    } finally {
                        backend.assertNothingLeaked();
                    }
                }
            }
        }

        @Override
        public void afterAll(ExtensionContext context) throws Exception {
            for (Field field : annotated(context.getRequiredTestClass())) {
                BackendFixture backend = context.getStore(NAMESPACE).remove(field, BackendFixture.class);
                if (backend != null) {
                    backend.close();
                }
            }
        }

        private static List<Field> annotated(Class<?> testClass) {
            List<Field> fields = new ArrayList<>();
            for (Class<?> type = testClass; type != null; type = type.getSuperclass()) {
                for (Field field : type.getDeclaredFields()) {
                    if (field.isAnnotationPresent(SharedBackend.class)
                            && field.getType() == BackendFixture.class
                            && Modifier.isStatic(field.getModifiers())) {
                        fields.add(field);
                    }
                }
            }
            return fields;
        }
    }
}
