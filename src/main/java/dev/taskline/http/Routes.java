package dev.taskline.http;

import io.vertx.ext.web.Router;

/** The routes of one resource, declared together with their handlers. */
interface Routes {

    void mount(Router router);
}
