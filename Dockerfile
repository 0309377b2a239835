# speech-emulator: both emulated services and the control plane in one small image.
# Build:  docker build -t speech-emulator .
# Run:    docker run --rm -p 8900:8900 -p 8901:8901 -p 8910:8910 -p 50000-50100:50000-50100/udp speech-emulator

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/bundle.mjs scripts/boot.mjs ./scripts/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The build starts the new bundle once (it writes the code cache the image starts from): it reads the fixtures.
COPY fixtures ./fixtures
RUN npm run build
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production \
    EMULATOR_HOST=0.0.0.0 \
    EMULATOR_SPEECH_PORT=8900 \
    EMULATOR_SPEECH_BACKUP_PORT=8901 \
    EMULATOR_PLATFORM_PORT=8910 \
    EMULATOR_RTC_UDP_PORTS=50000-50100
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY fixtures ./fixtures
# The data dir, for a volume: EMULATOR_DATA_DIR=/data (docker-compose.persist.yml, docker-compose.scaling.yml).
RUN mkdir -p /data && chown node:node /data
USER node
# The rooms' WebRTC media (UDP; a narrow range so `-p` maps it quickly).
EXPOSE 8900 8901 8910 50000-50100/udp
HEALTHCHECK --interval=5s --timeout=3s --start-period=2s --retries=5 \
  CMD ["node", "-e", "const t=process.env.EMULATOR_CONTROL_TOKEN;fetch('http://127.0.0.1:'+(process.env.EMULATOR_SPEECH_PORT||8900)+'/_emulator/health',{headers:t?{authorization:'Bearer '+t}:{}}).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/main.js"]
