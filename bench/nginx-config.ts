// nginx in front of replicas on loopback ports, in the foreground and with every file in one directory: what
// the fleet's benchmark (fleet-change.ts) and its end-to-end test (test/fleet-nginx.e2e.test.ts) both run.
// The bench's own plain-HTTP proxy, not deploy/nginx/explore-replica.conf: the same upstream and proxy_*
// directives (test/deploy/deploy-kit.test.ts checks they agree) without TLS or gzip, whose cost is nginx's, not
// the replicas'. The shipped file itself runs in test/deploy/nginx-tls.e2e.test.ts.
import { join } from 'node:path'

/**
 * A main configuration around `http` (directives of the http block), startable by any user: in the foreground,
 * the pid and temp files in `dir`.
 */
export function mainConfig (
  dir: string, http: string, { errorLog = join(dir, 'error.log'), connections = 256 } = {}
): string {
  const temp = join(dir, 'temp')
  // As root nginx's workers would run as nobody, who cannot enter the caller's private temp directory.
  return `${process.getuid?.() === 0 ? 'user root root;\n' : ''}daemon off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${errorLog} warn;
events { worker_connections ${connections}; }
http {
  access_log off;
  client_body_temp_path ${temp};
  proxy_temp_path ${temp};
  fastcgi_temp_path ${temp};
  uwsgi_temp_path ${temp};
  scgi_temp_path ${temp};
${http}
}
`
}

export function nginxConfig (dir: string, port: number, upstreams: number[]): string {
  return mainConfig(dir, `  upstream explore_replicas {
    ${upstreams.map(p => `server 127.0.0.1:${p} max_fails=2 fail_timeout=10s;`).join('\n    ')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://explore_replicas;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_next_upstream error timeout http_502 http_503;
    }
  }`)
}
