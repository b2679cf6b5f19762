#!/usr/bin/python3
"""Run the Django + DRF reference implementation of the explore API.

    /usr/bin/python3 test/drf-reference/serve.py --snapshot PATH --port N [--max-limit 100]
        [--trust-proxy] [--quiet]
        [--stock-parsing] [--keep-head-body] [--no-mail-admins]   (observation modes)

Binds 127.0.0.1 with Django's own (threaded) WSGI server, the one behind
`manage.py runserver`. Needs Debian's python3-django (3.2) and
python3-djangorestframework (3.14); use /usr/bin/python3, not a pyenv python.
"""
import argparse
import logging
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--snapshot', required=True, help='snapshot JSON (format v1)')
    p.add_argument('--port', type=int, required=True)
    p.add_argument('--max-limit', type=int, default=100, help='LimitOffsetPagination.max_limit (default 100)')
    p.add_argument('--trust-proxy', action='store_true',
                   help='USE_X_FORWARDED_HOST=True and SECURE_PROXY_SSL_HEADER=(X-Forwarded-Proto, https)')
    p.add_argument('--stock-parsing', action='store_true',
                   help='observation mode: undo the narrowings of limit/offset/companies '
                        '(plain DRF int() parsing, forms.IntegerField for companies)')
    p.add_argument('--keep-head-body', action='store_true',
                   help="observation mode: send the body on HEAD like Django 3.2's runserver does "
                        '(default: strip it, as gunicorn/uwsgi do)')
    p.add_argument('--no-mail-admins', action='store_true',
                   help="observation mode: drop Django's default mail_admins log handler (see test/drf-reference/README.md, "
                        '>1000 query fields)')
    p.add_argument('--quiet', action='store_true', help='do not log each request to stderr')
    return p.parse_args(argv)


def logging_config(args):
    # Django's DEFAULT_LOGGING stays in force (disable_existing_loggers False):
    # in particular the 'django' logger's mail_admins handler, active when
    # DEBUG=False, which matters for the >1000-query-fields case (README.md here, "Query size").
    # Added: request lines and 4xx/5xx records echoed on stderr.
    loggers = {
        'django.server': {'handlers': ['stderr'], 'level': 'ERROR' if args.quiet else 'INFO', 'propagate': False},
        'django.request': {'handlers': ['stderr'], 'level': 'ERROR' if args.quiet else 'WARNING', 'propagate': True},
    }
    if args.no_mail_admins:
        loggers['django'] = {'handlers': ['stderr'], 'level': 'ERROR', 'propagate': False}
    return {
        'version': 1,
        'disable_existing_loggers': False,
        'handlers': {'stderr': {'class': 'logging.StreamHandler'}},
        'loggers': loggers,
    }


def configure(args):
    from django.conf import settings
    extra = {}
    if args.trust_proxy:
        extra['USE_X_FORWARDED_HOST'] = True
        extra['SECURE_PROXY_SSL_HEADER'] = ('HTTP_X_FORWARDED_PROTO', 'https')
    settings.configure(
        DEBUG=False,
        SECRET_KEY='drf-reference-not-secret',
        ALLOWED_HOSTS=['*'],
        ROOT_URLCONF='reference_app',
        APPEND_SLASH=True,
        MIDDLEWARE=['django.middleware.common.CommonMiddleware'],
        INSTALLED_APPS=['rest_framework'],
        DATABASES={},
        USE_TZ=True,
        REST_FRAMEWORK={
            'DEFAULT_RENDERER_CLASSES': ['rest_framework.renderers.JSONRenderer'],
            'DEFAULT_PARSER_CLASSES': ['rest_framework.parsers.JSONParser'],
            # no django.contrib.auth: no authentication, anonymous user is None
            'DEFAULT_AUTHENTICATION_CLASSES': [],
            'DEFAULT_PERMISSION_CLASSES': ['rest_framework.permissions.AllowAny'],
            'UNAUTHENTICATED_USER': None,
        },
        LOGGING=logging_config(args),
        EXPLORE_MAX_LIMIT=args.max_limit,
        EXPLORE_STOCK_PARSING=args.stock_parsing,
        **extra,
    )


def make_server_classes(keep_head_body):
    import socketserver
    from django.core.servers import basehttp

    class HeadAwareServerHandler(basehttp.ServerHandler):
        # Django 3.2's runserver writes the GET body on HEAD (the WSGI app does
        # not strip it). Production WSGI servers (gunicorn, uwsgi) drop it and
        # keep the headers, Content-Length included; do the same.
        def write(self, data):
            if self.environ.get('REQUEST_METHOD') == 'HEAD' and not keep_head_body:
                if not self.status:
                    raise AssertionError('write() before start_response()')
                if not self.headers_sent:
                    self.bytes_sent = len(data)
                    self.send_headers()
                return
            super().write(data)

    class RequestHandler(basehttp.WSGIRequestHandler):
        def handle_one_request(self):
            # copy of Django's, with our ServerHandler
            self.raw_requestline = self.rfile.readline(65537)
            if len(self.raw_requestline) > 65536:
                self.requestline = ''
                self.request_version = ''
                self.command = ''
                self.send_error(414)
                return
            if not self.parse_request():
                return
            handler = HeadAwareServerHandler(self.rfile, self.wfile, self.get_stderr(), self.get_environ())
            handler.request_handler = self
            handler.run(self.server.get_app())

    class Server(socketserver.ThreadingMixIn, basehttp.WSGIServer):
        daemon_threads = True

    return Server, RequestHandler


def main(argv):
    args = parse_args(argv)
    sys.dont_write_bytecode = True  # keep test/drf-reference free of __pycache__
    sys.path.insert(0, HERE)
    configure(args)
    import django
    django.setup()
    import reference_app
    from django.core.wsgi import get_wsgi_application

    data = reference_app.load_snapshot(args.snapshot)
    app = get_wsgi_application()
    Server, RequestHandler = make_server_classes(args.keep_head_body)
    httpd = Server(('127.0.0.1', args.port), RequestHandler)
    httpd.set_app(app)
    langs = ', '.join('%s=%d' % (k, len(v)) for k, v in reference_app.SNAPSHOT.items())
    print('drf-reference: Django %s, DRF %s, snapshot %s (generated_at %s; %s), max_limit %d, '
          'listening on http://127.0.0.1:%d/' % (
              django.get_version(), __import__('rest_framework').VERSION, args.snapshot,
              data.get('generated_at'), langs, args.max_limit, httpd.server_address[1]),
          file=sys.stderr, flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


if __name__ == '__main__':
    logging.captureWarnings(True)
    main(sys.argv[1:])
